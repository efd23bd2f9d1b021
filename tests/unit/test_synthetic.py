import pytest

from rnnsearch.text.synthetic import make_pairs, write_task


def test_reverse_and_map_tasks_are_what_they_say():
    for source, target in make_pairs("reverse", 50, 5, 30, 10, seed=1):
        assert target.split() == source.split()[::-1]
    pairs = make_pairs("map", 200, 5, 30, 10, seed=1)
    mapping = {}
    for source, target in pairs:
        assert len(source.split()) == len(target.split())
        for s, t in zip(source.split(), target.split()):
            assert mapping.setdefault(s, t) == t
    assert len(set(mapping.values())) == len(mapping)


def test_lengths_cover_the_range_and_generation_is_deterministic():
    pairs = make_pairs("reverse", 2000, 5, 80, 20, seed=3)
    lengths = [len(s.split()) for s, _ in pairs]
    assert min(lengths) == 5 and max(lengths) == 80
    assert pairs == make_pairs("reverse", 2000, 5, 80, 20, seed=3)
    assert pairs != make_pairs("reverse", 2000, 5, 80, 20, seed=4)


def test_write_task_writes_aligned_splits(tmp_path):
    paths = write_task(tmp_path, "map", {"train": 30, "test": 5}, 5, 9, 8, seed=1)
    assert [p.name for p in paths] == ["train.src", "train.tgt", "test.src", "test.tgt"]
    assert len((tmp_path / "test.src").read_text().splitlines()) == 5
    assert (tmp_path / "train.src").read_text() != (tmp_path / "test.src").read_text()[:10]


def test_unknown_task_is_refused():
    with pytest.raises(ValueError, match="unknown task"):
        make_pairs("sort", 1, 1, 2, 3, seed=0)
