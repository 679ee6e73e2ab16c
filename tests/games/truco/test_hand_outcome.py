"""Who wins a finished Truco hand and its points, worked out by hand from the rules of
games/truco/rules.py (LADDER 1, 3, 6, 9, 12; a played hand of eleven is worth 3; folding it gives
the opponent 1). Vira 2d makes the 3s the manilhas; the card order is 4 5 6 7 Q J K A 2 3."""

import pytest

from strongsolve.games.truco import rules as R
from strongsolve.games.truco.line import hand_outcome

VIRA = R.parse_card("2d")


def test_tricks_decide_the_hand_at_the_accepted_level():
    # mano 7h loses to pe 2h; pe leads 7s, mano's 3c (manilha) wins; mano leads 2s, pe's 3d wins
    assert hand_outcome(11, 11, VIRA, "7h 2h 7s 3c 2s 3d") == (R.PE, 1)
    # at 5-5 mano raises, pe accepts: the hand is worth 3 (mano takes the first two tricks)
    assert hand_outcome(5, 5, VIRA, "truco accept 3c 7h 3h 4s") == (R.MANO, 3)


def test_folds_give_the_stake_before_the_raise():
    assert hand_outcome(5, 5, VIRA, "truco fold") == (R.MANO, 1)
    assert hand_outcome(5, 5, VIRA, "truco truco fold") == (R.PE, 3)


def test_hand_of_eleven_is_worth_three_and_its_fold_one():
    assert hand_outcome(11, 10, VIRA, "fold") == (R.PE, 1)
    assert hand_outcome(11, 10, VIRA, "play 7h 2h 7s 3c 2s 3d") == (R.PE, 3)


def test_an_unfinished_hand_is_refused():
    with pytest.raises(ValueError, match="not over"):
        hand_outcome(11, 11, VIRA, "7h 2h")


def test_a_fold_nobody_is_offered_is_refused():
    # at 11-11 nobody raises and nobody decides a hand of eleven: no fold at any point
    for line in ("fold", "7h fold", "7h 2h 7s fold"):
        with pytest.raises(ValueError, match=r"illegal fold .* at score 11-11: a player may fold only"):
            hand_outcome(11, 11, VIRA, line)
    # at 5-5 with no raise pending the acting player may play a card or raise, not fold
    with pytest.raises(ValueError, match="may only play a card or raise"):
        hand_outcome(5, 5, VIRA, "7h fold")
    # a hand of eleven once played has no more fold either
    with pytest.raises(ValueError, match="illegal fold"):
        hand_outcome(11, 10, VIRA, "play fold")
