"""A speech model through the same CLI as text: train, evaluate, translate WAVs, draw alignments."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from rnnsearch.cli import main
from rnnsearch.speech.digits import make_utterances
from tests.integration.conftest import write_config, write_lines, write_wav


def test_a_speech_model_directory_has_no_source_subwords(speech_model):
    assert (speech_model / "subwords.tgt.model").is_file()
    assert not (speech_model / "subwords.src.model").exists()
    rows = [json.loads(line) for line in (speech_model / "metrics.jsonl").read_text().splitlines()]
    validations = [r for r in rows if "valid_der" in r]
    assert [r["step"] for r in validations] == [3, 6]
    assert all(0 <= r["valid_accuracy"] <= 100 and r["valid_der"] >= 0 for r in validations)
    assert len(list((speech_model / "alignments").iterdir())) == 6


def test_evaluate_reports_digit_error_rate_and_accuracy(speech_model, capsys):
    assert main(["evaluate", str(speech_model), "--beam-size", "2", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report) == {"DER", "string accuracy"}
    assert "8 strings" in report["DER"]["signature"] and "jiwer" in report["DER"]["signature"]


def test_translate_reads_wav_paths_and_writes_digits_and_time_aligned_alignments(speech_model, tmp_path, capsys):
    spoken = make_utterances("customary", "test", 2, seed=5, max_digits=3)
    paths = [str(write_wav(tmp_path / f"u{k}.wav", u.samples)) for k, u in enumerate(spoken)]
    listing = write_lines(tmp_path / "wavs.txt", paths)
    alignments = tmp_path / "a.jsonl"
    assert main(["translate", str(speech_model), "-i", str(listing), "--alignments", str(alignments)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and all(re.fullmatch(r"[0-9 ]*", line) for line in lines)
    for row, utterance in zip(map(json.loads, alignments.read_text().splitlines()), spoken):
        times = [float(t.rstrip("s")) for t in row["source_tokens"]]
        assert times[0] == 0.0 and times == sorted(times)
        assert times[-1] <= len(utterance.samples) / 8000
        matrix = np.array(row["hypotheses"][0]["alignment"])
        assert matrix.shape == (len(row["hypotheses"][0]["target_tokens"]), len(times))


def test_word_links_of_a_recording_are_refused_in_one_line(speech_model, tmp_path, capsys):
    """A recording has time steps, not words: --hard-alignments has nothing to link."""
    utterance = make_utterances("customary", "test", 1, seed=5, max_digits=3)[0]
    listing = write_lines(tmp_path / "wavs.txt", [str(write_wav(tmp_path / "u.wav", utterance.samples))])
    arguments = ["translate", str(speech_model), "-i", str(listing), "--hard-alignments", str(tmp_path / "h.txt")]
    assert main(arguments) == 1
    assert capsys.readouterr().err.splitlines()[-1].startswith("rnnsearch: error: --hard-alignments: a recording")
    assert not (tmp_path / "h.txt").exists()


def test_attention_draws_a_heatmap_for_a_wav(speech_model, tmp_path, capsys):
    utterance = make_utterances("customary", "test", 1, seed=6, max_digits=3)[0]
    wav = write_wav(tmp_path / "one.wav", utterance.samples)
    output = tmp_path / "heatmap.png"
    assert main(["attention", str(speech_model), str(wav), "-o", str(output)]) == 0
    assert output.stat().st_size > 1000


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (b"this is not audio, just words\n", "not a PCM WAV file"),
        (None, "sample rate 16000 Hz, expected 8000 Hz"),
    ],
)
def test_bad_wav_input_is_a_one_line_error(speech_model, tmp_path, capsys, content, fragment):
    bad = tmp_path / "bad.wav"
    if content is None:
        write_wav(bad, np.zeros(1600), rate=16000)
    else:
        bad.write_bytes(content)
    status = main(["translate", str(speech_model), "-i", str(write_lines(tmp_path / "in.txt", [str(bad)]))])
    err = capsys.readouterr().err
    assert status != 0 and "Traceback" not in err
    assert err.splitlines()[-1].startswith("rnnsearch: error: ") and fragment in err and str(bad) in err


def test_a_speech_model_refuses_text_and_a_text_config_refuses_the_speech_metric(speech_model, tmp_path, capsys):
    import rnnsearch

    with pytest.raises(rnnsearch.errors.UserError, match="reads audio"):
        rnnsearch.load(speech_model).translate(["eins zwei"])
    config = write_config(
        tmp_path / "c.yaml",
        {
            "data": {"train": {"src": "a", "tgt": "b"}, "valid": {"src": "a", "tgt": "b"}},
            "train": {"selection_metric": "error_rate"},
        },
    )
    assert main(["train", str(config)]) != 0
    assert "selection_metric" in capsys.readouterr().err


def test_evaluate_given_a_text_file_for_wav_paths_names_the_file_and_line(speech_model, tmp_path, capsys):
    src, ref = write_lines(tmp_path / "text.de", ["Ein Hund."]), write_lines(tmp_path / "ref.txt", ["1 2"])
    assert main(["evaluate", str(speech_model), "--src", str(src), "--ref", str(ref)]) == 1
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"rnnsearch: error: {src}, line 1: 'Ein Hund.' is no file; --src lists WAV files, one path a line"
    )
