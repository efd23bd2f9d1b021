import csv

import yaml

from rnnsearch.cli import main
from tests.integration.conftest import write_config


def test_compare_trains_every_variant_alike_and_writes_the_table_and_plot(tmp_path, capsys):
    assert (
        main(
            [
                "synthetic",
                "reverse",
                str(tmp_path / "data"),
                "--train",
                "300",
                "--valid",
                "20",
                "--test",
                "30",
                "--max-length",
                "30",
                "--vocabulary",
                "8",
            ]
        )
        == 0
    )
    base = yaml.safe_load(open("configs/synthetic_reverse.yaml", encoding="utf-8"))
    for split in ("train", "valid", "test"):
        base["data"][split] = {
            "src": str(tmp_path / "data" / f"{split}.src"),
            "tgt": str(tmp_path / "data" / f"{split}.tgt"),
        }
    base["model"].update(embedding_size=8, encoder={"hidden_size": 8}, decoder={"hidden_size": 16, "readout_size": 8})
    base["model"]["attention"] = {"score": "additive", "size": 8}
    base["train"].update(valid_every=3, log_every=1)
    experiment = {
        "base": str(write_config(tmp_path / "base.yaml", base)),
        "output": str(tmp_path / "out"),
        "budget": {"max_steps": 3},
        "variants": {"rnnsearch": {"model.attention.score": "additive"}, "fixed": {"model.attention": "none"}},
    }
    assert main(["compare", str(write_config(tmp_path / "experiment.yaml", experiment))]) == 0
    rows = list(csv.DictReader(open(tmp_path / "out" / "results.csv", encoding="utf-8")))
    assert [r["variant"] for r in rows] == ["rnnsearch", "fixed"]
    assert all(r["steps"] == "3" for r in rows)
    assert int(rows[0]["parameters"]) > int(rows[1]["parameters"])
    assert (tmp_path / "out" / "bleu_by_length.png").stat().st_size > 1000
    assert "| rnnsearch |" in (tmp_path / "out" / "results.md").read_text()
