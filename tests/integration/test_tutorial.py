"""docs/tutorial.ipynb runs top to bottom, its checks holding (α rows sum to 1, padding
weighs 0, the contexts shown are the decoder's own), at the small setting that
RNNSEARCH_TUTORIAL=test selects, in a Jupyter kernel as a reader would run it."""

from __future__ import annotations

from pathlib import Path

import nbclient
import nbformat

TUTORIAL = Path(__file__).resolve().parents[2] / "docs" / "tutorial.ipynb"


def test_the_tutorial_runs_top_to_bottom_at_its_test_setting(tmp_path, monkeypatch):
    monkeypatch.setenv("RNNSEARCH_TUTORIAL", "test")
    monkeypatch.setenv("RNNSEARCH_TUTORIAL_DIR", str(tmp_path))
    notebook = nbformat.read(TUTORIAL, as_version=4)
    client = nbclient.NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(TUTORIAL.parent)}}
    )
    client.execute()  # a failing cell or check raises CellExecutionError, naming the cell
    outputs = [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs]
    assert not [output for output in outputs if output.output_type == "error"]
    shown = [output["data"]["text/html"] for output in outputs if "text/html" in output.get("data", {})]
    assert len(shown) == 3 and all("<svg" in html or "<img" in html for html in shown)
    assert (tmp_path / "de-en" / "best.safetensors").exists()
