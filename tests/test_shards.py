"""`run --shard K/N` and `extparity merge`: a CI matrix of N jobs gives the bytes of one run; so
does a run whose engines go one at a time (`--jobs 1`)."""

from __future__ import annotations

import json

import pytest

from extparity.results.shards import in_shard, parse_shard

from support.cli import call_cli

ENGINES = "python,quickjs-chrome"


@pytest.fixture(scope="module")
def sharded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("shards")
    whole = call_cli("run", "--engines", ENGINES, "--json", str(folder / "whole.json"))
    shards = [call_cli("run", "--engines", ENGINES, "--shard", f"{k}/4", "--json", str(folder / f"shard-{k}.json"))
              for k in range(1, 5)]
    merged = call_cli("merge", *(str(folder / f"shard-{k}.json") for k in range(1, 5)), "--json", str(folder / "merged.json"))
    return folder, whole, shards, merged


@pytest.mark.slow
def test_four_shards_merged_give_the_bytes_of_one_unsharded_run(sharded):
    folder, whole, shards, merged = sharded
    assert whole[0] == 0 and all(code == 0 for code, _, _ in shards) and merged[0] == 0, merged
    assert (folder / "merged.json").read_bytes() == (folder / "whole.json").read_bytes()


@pytest.mark.slow
def test_merged_shards_keep_the_configs_engine_order_when_it_is_not_alphabetical(tmp_path):
    engines = "python,v8-chrome,spidermonkey-firefox"  # config order; the JSON's "engines" object is sorted
    whole = call_cli("run", "--engines", engines, "--json", str(tmp_path / "whole.json"))
    for k in (1, 2):
        assert call_cli("run", "--engines", engines, "--shard", f"{k}/2", "--json", str(tmp_path / f"shard-{k}.json"))[0] == 0
    merged = call_cli("merge", str(tmp_path / "shard-1.json"), str(tmp_path / "shard-2.json"), "--json", str(tmp_path / "merged.json"))
    assert whole[0] == 0 and merged[0] == 0, merged
    assert [row["engine"] for row in json.loads((tmp_path / "merged.json").read_text())["summary"]] == engines.split(",")
    assert (tmp_path / "merged.json").read_bytes() == (tmp_path / "whole.json").read_bytes()


@pytest.mark.slow
def test_engines_run_one_at_a_time_give_the_bytes_of_engines_run_concurrently(sharded):
    folder, whole, _, _ = sharded
    one_by_one = call_cli("run", "--engines", ENGINES, "--jobs", "1", "--json", str(folder / "sequential.json"))
    assert one_by_one[0] == 0, one_by_one[2]
    assert (folder / "sequential.json").read_bytes() == (folder / "whole.json").read_bytes()


@pytest.mark.slow
def test_every_case_is_in_exactly_one_shard_and_no_shard_is_empty(sharded):
    folder, _, _, _ = sharded
    ids = [[case["id"] for case in json.loads((folder / f"shard-{k}.json").read_text())["cases"]] for k in range(1, 5)]
    everything = [case["id"] for case in json.loads((folder / "whole.json").read_text())["cases"]]
    assert sorted(sum(ids, [])) == sorted(everything)
    assert all(len(part) > len(everything) // 8 for part in ids)


def test_the_partition_is_stable_by_case_id():
    assert [in_shard("bare-nested-arguments-objects-and-arrays", (k, 3)) for k in (1, 2, 3)].count(True) == 1
    assert in_shard("x", (1, 1))


@pytest.mark.parametrize("text", ["0/4", "5/4", "2", "a/b", "1/0"])
def test_a_malformed_shard_is_a_usage_error(text):
    with pytest.raises(ValueError):
        parse_shard(text)
    code, _, err = call_cli("run", "--engines", "python", "--shard", text)
    assert code == 2 and "--shard" in err


@pytest.mark.slow
def test_results_of_different_engine_sets_do_not_merge(sharded, tmp_path):
    folder, _, _, _ = sharded
    call_cli("run", "--engines", "python", "--shard", "2/4", "--json", str(tmp_path / "other.json"))
    code, _, err = call_cli("merge", str(folder / "shard-1.json"), str(tmp_path / "other.json"), "--json", str(tmp_path / "m.json"))
    assert code == 1
    assert "cannot merge: result 2 ran engines python, result 1 ran python, quickjs-chrome" in err
    assert not (tmp_path / "m.json").exists()


@pytest.mark.slow
def test_the_same_shard_twice_does_not_merge(sharded, tmp_path):
    folder, _, _, _ = sharded
    code, _, err = call_cli("merge", str(folder / "shard-1.json"), str(folder / "shard-1.json"), "--json", str(tmp_path / "m.json"))
    assert code == 1 and "is in result 1 and in result 2" in err
