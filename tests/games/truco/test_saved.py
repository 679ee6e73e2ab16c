"""A stored Truco subgame is read only under its own name: one copied over another's file passes
its checksums, so its score and vira class are checked against the file name; a subgame of an
older format version (no off-path mask) is refused with the command that solves it again."""

import json
import shutil

import numpy as np
import pytest
import zarr

from strongsolve.games.truco.saved import FORMAT_VERSION, read_subgame, subgame_name, write_subgame
from strongsolve.store.checksums import with_checksum
from strongsolve.store.errors import CorruptResultError


def _write(path, score, vira_class):
    arrays = dict(policy=np.array([0.25, 0.75]), off_path=np.array([False]),
                  infoset_ptr=np.array([0, 2], np.int64),
                  infoset_key=np.array([7], np.int64), hands=np.array([[1, 2, 3]], np.int64))
    write_subgame(path, arrays, dict(score=list(score), vira_class=vira_class, value=0.5))


def test_a_subgame_under_its_own_name_is_read(tmp_path):
    path = tmp_path / "group_11" / subgame_name(11, 11, 4)
    _write(path, (11, 11), 4)
    attrs, data = read_subgame(path)
    assert attrs["score"] == [11, 11] and attrs["vira_class"] == 4 and attrs["value"] == 0.5
    assert data["policy"].tolist() == [0.25, 0.75] and data["off_path"].tolist() == [False]
    assert attrs["format_version"] == FORMAT_VERSION == 2


def test_a_subgame_of_the_format_before_the_off_path_mask_is_refused(tmp_path):
    # format 1: the same group without ``off_path`` and without ``format_version``, checksums valid
    path = tmp_path / "group_11" / subgame_name(11, 11, 4)
    _write(path, (11, 11), 4)
    root = zarr.open_group(str(path), mode="r+")
    attrs = {k: v for k, v in dict(root.attrs).items() if k not in ("checksum", "format_version")}
    del attrs["arrays"]["off_path"]
    del root["off_path"]
    root.attrs.clear()
    root.attrs.update(with_checksum(json.loads(json.dumps(attrs))))
    for arrays in (True, False):
        with pytest.raises(CorruptResultError) as err:
            read_subgame(path, arrays=arrays)
        assert str(err.value) == (
            f"{path} is a solved subgame of format version 1, written before the policy held a best "
            "response off the equilibrium path; this version of strongsolve reads format 2 only. "
            "Solve it again with `snakemake --cores all --forcerun truco_row11_group`")


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
