"""Rules of heads-up Truco Paulista over physical cards, pinned in one place.

Sources
-------
- pagat.com, "Brazilian Truco" (J. McLeod, from J. Avila and G. Schafaschek),
  https://www.pagat.com/put/truco_br.html (text read through the stored copies
  https://gamesitereviews.biz/guides/202401/brazilian-truco-truco/ and
  http://whystudio.eu/como-roubar-no-truco-brasileiro/): the 40-card deck (no 8, 9, 10), the common
  order 4 5 6 7 Q J K A 2 3, the manilhas as the rank after the vira in that cycle, ranked
  paus > copas > espadas > ouros, the raise ladder truco 3 / 6 / 9 / 12 and a fold scoring the value
  before the raise, the hand of eleven (play for 3 or give the opponent 1).
- miniTruco rules, http://minitruco.googlecode.com/svn/trunk/miniTruco/res/regras_en.txt: two tricks
  win the hand; a tied first trick goes to the winner of the next decided trick; a tie in trick 2 or
  3 goes to the trick-1 winner; three ties score nobody; only the side that accepted may raise next.
- https://portalinsights.com.br/perguntas-frequentes/qual-e-a-carta-mais-fraca-do-truco: in the mão
  de onze there is no raise (worth 3 if played, 1 if refused); both sides at 11 is the "mão de ferro".
- The issue "Truco Paulista, part 1" fixes the heads-up reading: mano (the non-dealer) leads trick 1,
  a trick's winner leads the next, after a tied trick its leader leads again; at 11-11 the hand is
  played without raises.

Playing a card face down (the option ``face_down``, off by default)
-------------------------------------------------------------------
- portalinsights.com.br, "Qual é a carta mais fraca do truco"
  (https://portalinsights.com.br/perguntas-frequentes/qual-e-a-carta-mais-fraca-do-truco), on the
  "carta coberta": a card played with its face down, allowed only in the 2nd and 3rd trick
  ("rodada"), and worth nothing ("A carta coberta não vale nada").
- pagat.com "Brazilian Truco" (stored copy http://whystudio.eu/como-roubar-no-truco-brasileiro/):
  "Some have a rule that after a tied trick, cards cannot be played face down": a house variation,
  so the rule itself is not universal; we follow the plain reading (no tied-trick exception).
- baixada-cards/truco-engine (the rules engine behind baixada-cards/truco-solver, files
  crates/truco-engine/src/engine.rs and rules.rs, read for the facts only): a card may be played
  face down by either player, leader or follower, whenever at least one trick is complete
  (``hidden_play_allowed``); a face-down card loses to any face-up card and two face-down cards tie
  the trick (``compare_plays``); the opponent sees that a card was covered but not which
  (``public_state`` shows no card; the solver's information sets record ``PlayFaceDown(card)`` for
  the player and ``OpponentPlayedHidden`` for the opponent).

So here: from trick 2 on, the player to play (leader or follower) may play any card of their hand
face up or face down; a face-down card has no strength (it loses to every face-up card, two face-down
cards tie), a tie after a face-down card follows the usual tie rules (its leader leads again, and
``hand_winner`` as for any tie); the card is hidden from the opponent for the rest of the hand, while
its player remembers it. The 11-11 hand played blind (cards drawn at random) has no choices, so no
covered cards.

Cards
-----
A card is an int ``rank * 4 + suit`` (0..39). Ranks 0..9 are ``4 5 6 7 Q J K A 2 3`` (weakest first);
suits 0..3 are ouros (d), espadas (s), copas (h), paus (c), in manilha order (weakest first). Text
form: rank letter then suit letter, e.g. ``"7c"``, ``"Ah"``.

Strength
--------
Given the vira's rank ``v``, the manilha rank is ``(v + 1) % 10``. The strength of a common card is
the position of its rank among the nine common ranks (0..8); a manilha of suit ``s`` has strength
``9 + s`` (9..12). Higher strength wins a trick; equal strength (two common cards of one rank) ties.
"""

from dataclasses import dataclass, field

RANKS = "4567QJKA23"
SUITS = "dshc"  # ouros, espadas, copas, paus
SUIT_NAMES = ("ouros", "espadas", "copas", "paus")
N_RANKS = 10
N_SUITS = 4
N_CARDS = 40
HAND_SIZE = 3
N_STRENGTHS = 13  # nine common ranks, four manilhas
LADDER = (1, 3, 6, 9, 12)  # value of the hand at each raise level
MAO_DE_ONZE_VALUE = 3  # a played hand of eleven
MAO_DE_ONZE_FOLD = 1  # the opponent's points when the player at 11 folds
TARGET = 12  # first to 12 wins the match

MANO, PE = 0, 1  # roles: mano (non-dealer, leads trick 1) and pé (dealer)
TIE = 2  # trick result: 0 mano won, 1 pé won, 2 tie


def card_rank(card):
    return card // N_SUITS


def card_suit(card):
    return card % N_SUITS


def parse_card(text):
    """Parse ``"7c"`` into a card index.

    Raises
    ------
    ValueError
        Naming the bad text and the allowed ranks and suits.
    """
    t = text.strip()
    if len(t) != 2 or t[0].upper() not in RANKS or t[1].lower() not in SUITS:
        raise ValueError(f"bad card {text!r}: expected a rank in {RANKS!r} (Q J K A upper case) "
                         f"followed by a suit in {SUITS!r} (ouros espadas copas paus), e.g. '7c'")
    return RANKS.index(t[0].upper()) * N_SUITS + SUITS.index(t[1].lower())


def card_text(card):
    return RANKS[card_rank(card)] + SUITS[card_suit(card)]


def parse_hand(text):
    """Parse ``"Ac 3h 4s"`` into a tuple of three distinct card indices (ValueError otherwise)."""
    cards = tuple(parse_card(t) for t in text.replace(",", " ").split())
    if len(cards) != HAND_SIZE or len(set(cards)) != HAND_SIZE:
        raise ValueError(f"bad hand {text!r}: expected {HAND_SIZE} distinct cards such as 'Ac 3h 4s'")
    return cards


def manilha_rank(vira_rank):
    """The manilha rank: the rank after the vira in the cycle 4 5 6 7 Q J K A 2 3 4 (pagat)."""
    return (vira_rank + 1) % N_RANKS


def strength(card, vira_rank):
    """Trick strength of ``card`` (0..12) under a vira of rank ``vira_rank`` (see module docstring)."""
    r = card_rank(card)
    m = manilha_rank(vira_rank)
    if r == m:
        return 9 + card_suit(card)
    return r if r < m else r - 1


COVERED = -1  # the strength of a card played face down: below every face-up card


def trick_result(lead_card, follow_card, leader, vira_rank, lead_down=False, follow_down=False):
    """Winner of a trick in roles (MANO or PE), or TIE; a card played face down (``lead_down``,
    ``follow_down``) loses to any face-up card and ties another face-down card (module docstring)."""
    a = COVERED if lead_down else strength(lead_card, vira_rank)
    b = COVERED if follow_down else strength(follow_card, vira_rank)
    if a == b:
        return TIE
    return leader if a > b else 1 - leader


def next_leader(result, leader):
    """A trick's winner leads the next; after a tie its leader leads again."""
    return leader if result == TIE else result


def hand_winner(results, three_ties="nobody"):
    """Winner of the hand from the trick results so far.

    Parameters
    ----------
    results : sequence of int
        Results of the tricks played (MANO, PE or TIE), 1 to 3 of them.
    three_ties : {"nobody", "mano"}
        Three tied tricks score nobody (default) or give the hand to mano (the option in the issue).

    Returns
    -------
    int or None
        MANO or PE; -1 if the hand ended with nobody scoring; None if another trick is needed.
    """
    if len(results) < 2:
        return None
    r1, r2 = results[0], results[1]
    if len(results) == 2:
        if r1 != TIE and (r2 == r1 or r2 == TIE):
            return r1
        if r1 == TIE and r2 != TIE:
            return r2
        return None
    r3 = results[2]
    if r1 == TIE and r2 == TIE:
        if r3 != TIE:
            return r3
        return MANO if three_ties == "mano" else -1
    # r1 decided, r2 won by the other side: trick 3 decides, a tie there goes to the trick-1 winner
    return r1 if r3 == TIE else r3


@dataclass
class HandState:
    """One hand of heads-up Truco Paulista, with physical cards, as a state machine.

    Players are in roles: ``0`` mano, ``1`` pé. ``score`` is role-ordered (mano's, pé's points).
    Actions are strings: ``"play:<card>"`` (a card index), ``"raise"``, ``"accept"``, ``"fold"``,
    and at a hand of eleven ``"play_hand"`` / ``"fold"`` by the player at 11. With ``face_down``,
    from the second trick on each ``"play:<card>"`` has a ``"down:<card>"`` beside it: the card
    played face down (module docstring: it cannot win the trick, two covered cards tie).

    Rules (module docstring): with exactly one player at 11 that player first decides; a played hand
    of eleven is worth 3 with no raises, a fold gives the opponent 1. At 11-11 the hand is worth 1
    (any win ends the match) and there are no raises. Otherwise the hand is worth 1 and, on their
    turn before playing a card, a player may raise along ``LADDER``; the other accepts, folds (the
    raiser scores the value before the raise) or raises again; after an accept only the accepting
    side may raise next.
    """

    hands: tuple  # (mano's cards, pé's cards), tuples of card indices
    vira: int
    score: tuple = (0, 0)
    three_ties: str = "nobody"
    level: int = 0  # index into LADDER of the accepted value
    raiser: int = -1  # the side allowed to raise next (-1: either)
    pending: int = -1  # side that must answer a raise (-1: none)
    eleven: int = -1  # side that must decide a hand of eleven (-1: none)
    raises_allowed: bool = True
    face_down: bool = False  # the rule option: cards may be played face down from trick 2 on
    played: list = field(default_factory=list)  # cards of the current trick
    played_down: list = field(default_factory=list)  # whether each card of the trick is covered
    results: list = field(default_factory=list)
    leader: int = MANO
    used: tuple = ((), ())
    covered: tuple = ((), ())  # the cards each side played face down, in order
    points: tuple = None  # set when the hand is over: points scored by (mano, pé)

    def __post_init__(self):
        a, b = self.score
        if not (0 <= a <= 11 and 0 <= b <= 11):
            raise ValueError(f"bad score {self.score!r}: each side has 0..11 points before a hand")
        cards = list(self.hands[0]) + list(self.hands[1]) + [self.vira]
        if len(set(cards)) != 2 * HAND_SIZE + 1 or not all(0 <= c < N_CARDS for c in cards):
            raise ValueError("bad deal: hands and vira must be 7 distinct cards 0..39")
        if (a == 11) != (b == 11):
            self.eleven = MANO if a == 11 else PE
            self.raises_allowed = False
        elif a == 11:
            self.raises_allowed = False

    def to_move(self):
        if self.points is not None:
            return None
        if self.eleven >= 0:
            return self.eleven
        if self.pending >= 0:
            return self.pending
        return self.leader if not self.played else 1 - self.leader

    def legal_actions(self):
        p = self.to_move()
        if p is None:
            return []
        if self.eleven >= 0:
            return ["play_hand", "fold"]
        if self.pending >= 0:
            acts = ["accept", "fold"]
            if self.level + 2 < len(LADDER):
                acts.append("raise")
            return acts
        down = self.face_down and len(self.results) >= 1
        acts = []
        for c in self.hands[p]:
            if c not in self.used[p]:
                acts.append(f"play:{c}")
                if down:
                    acts.append(f"down:{c}")
        if self.raises_allowed and self.level + 1 < len(LADDER) and self.raiser in (-1, p):
            acts.append("raise")
        return acts

    def value(self):
        """Points at stake if the hand is decided by tricks now."""
        if self.eleven == -2:
            return MAO_DE_ONZE_VALUE
        return LADDER[self.level]

    def apply(self, action):
        """Apply a legal action in place (ValueError if illegal)."""
        if action not in self.legal_actions():
            raise ValueError(f"illegal action {action!r}; legal: {self.legal_actions()}")
        p = self.to_move()
        if self.eleven >= 0:
            if action == "fold":
                pts = [0, 0]
                pts[1 - p] = MAO_DE_ONZE_FOLD
                self.points = tuple(pts)
            self.eleven = -2  # decided: the hand is worth MAO_DE_ONZE_VALUE
            return
        if self.pending >= 0:
            if action == "accept":
                self.level += 1
                self.raiser = p
                self.pending = -1
            elif action == "fold":
                pts = [0, 0]
                pts[1 - p] = LADDER[self.level]
                self.points = tuple(pts)
            else:  # raise again: accepts the pending raise and proposes the next
                self.level += 1
                self.pending = 1 - p
            return
        if action == "raise":
            self.pending = 1 - p
            return
        how, card = action.split(":")
        card = int(card)
        used = list(self.used)
        used[p] = used[p] + (card,)
        self.used = tuple(used)
        if how == "down":
            covered = list(self.covered)
            covered[p] = covered[p] + (card,)
            self.covered = tuple(covered)
        self.played.append(card)
        self.played_down.append(how == "down")
        if len(self.played) == 2:
            res = trick_result(self.played[0], self.played[1], self.leader, self.vira // N_SUITS,
                               *self.played_down)
            self.results.append(res)
            self.leader = next_leader(res, self.leader)
            self.played = []
            self.played_down = []
            w = hand_winner(self.results, self.three_ties)
            if w is not None:
                pts = [0, 0]
                if w >= 0:
                    pts[w] = self.value()
                self.points = tuple(pts)
