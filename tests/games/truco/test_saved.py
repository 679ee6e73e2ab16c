"""A stored Truco subgame is read only under its own name: one copied over another's file passes
its checksums, so its score and vira class are checked against the file name."""

import shutil

import numpy as np
import pytest

from strongsolve.games.truco.saved import read_subgame, subgame_name, write_subgame
from strongsolve.store.errors import CorruptResultError


def _write(path, score, vira_class):
    arrays = dict(policy=np.array([0.25, 0.75]), infoset_ptr=np.array([0, 2], np.int64),
                  infoset_key=np.array([7], np.int64), hands=np.array([[1, 2, 3]], np.int64))
    write_subgame(path, arrays, dict(score=list(score), vira_class=vira_class, value=0.5))


def test_a_subgame_under_its_own_name_is_read(tmp_path):
    path = tmp_path / "group_11" / subgame_name(11, 11, 4)
    _write(path, (11, 11), 4)
    attrs, data = read_subgame(path)
    assert attrs["score"] == [11, 11] and attrs["vira_class"] == 4 and attrs["value"] == 0.5
    assert data["policy"].tolist() == [0.25, 0.75]


@pytest.mark.parametrize("name, stored", [
    (subgame_name(11, 11, 3), "holds subgame [11, 11] of vira class 4, not 11-11 of class 3"),
    (subgame_name(11, 10, 4), "holds subgame [11, 11] of vira class 4, not 11-10 of class 4"),
])
def test_a_subgame_copied_over_another_is_refused(tmp_path, name, stored):
    source = tmp_path / "group_11" / subgame_name(11, 11, 4)
    _write(source, (11, 11), 4)
    target = tmp_path / "group_11" / name
    shutil.copytree(source, target)
    for arrays in (True, False):
        with pytest.raises(CorruptResultError) as err:
            read_subgame(target, arrays=arrays)
        message = str(err.value)
        assert message.startswith(f"{target / 'zarr.json'} {stored} as its name says; ")
        assert "Rebuild it with `snakemake " in message
