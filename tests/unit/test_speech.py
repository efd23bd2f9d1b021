"""Tests for rnnsearch.speech: WAV reading, FSDD digit strings, features, cache and scores."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import tarfile
import wave
from pathlib import Path

import numpy as np
import pytest

from rnnsearch.errors import UserError
from rnnsearch.speech import features
from rnnsearch.speech.audio import read_wav, read_wav_bytes
from rnnsearch.speech.digits import (
    HELD_OUT_SPEAKER,
    PARTS,
    load_recordings,
    make_utterances,
    part_of,
    split_recordings,
)
from rnnsearch.speech.features import FeatureSettings, cached_features, log_mel, stack_frames, utterance_features
from rnnsearch.speech.metrics import digit_error_rate, string_accuracy

RATE = 8000
ROOT = Path(__file__).resolve().parents[2]
SPEECH_CONFIG = ROOT / "configs" / "fsdd_digits.yaml"


def wav_bytes(samples: np.ndarray, rate: int = RATE, width: int = 2, channels: int = 1) -> bytes:
    """A PCM WAV file of integer `samples` (already interleaved for several channels)."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as wav:
        wav.setnchannels(channels)
        wav.setsampwidth(width)
        wav.setframerate(rate)
        wav.writeframes(samples.tobytes())
    return buffer.getvalue()


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def message_of(excinfo: pytest.ExceptionInfo[UserError]) -> str:
    message = str(excinfo.value)
    assert "\n" not in message
    return message


def tone(seconds: float, rate: int = RATE) -> np.ndarray:
    """A chirp with a little noise: every mel bin varies, so normalisation is well defined."""
    t = np.arange(int(seconds * rate)) / rate
    noise = np.random.default_rng(0).standard_normal(len(t))
    return (0.5 * np.sin(2 * np.pi * (200 + 1500 * t) * t) + 0.01 * noise).astype(np.float32)


# WAV reading


def test_16_bit_round_trip(tmp_path: Path) -> None:
    ints = np.array([0, 1, -1, 16384, -32768, 32767], dtype="<i2")
    samples, rate = read_wav(write(tmp_path / "a.wav", wav_bytes(ints)))
    assert rate == RATE
    assert samples.dtype == np.float32
    np.testing.assert_array_equal(samples, ints / 32768.0)


def test_8_bit_is_unsigned_around_128(tmp_path: Path) -> None:
    samples, _ = read_wav(write(tmp_path / "a.wav", wav_bytes(np.array([128, 0, 255, 192], dtype="u1"), width=1)))
    np.testing.assert_array_equal(samples, [0.0, -1.0, 127 / 128, 0.5])


def test_stereo_is_averaged_to_mono(tmp_path: Path) -> None:
    ints = np.array([1000, 3000, -2000, 0], dtype="<i2")
    samples, _ = read_wav(write(tmp_path / "a.wav", wav_bytes(ints, channels=2)))
    np.testing.assert_allclose(samples, [2000 / 32768, -1000 / 32768])


def test_bytes_give_the_same_samples_as_the_file(tmp_path: Path) -> None:
    data = wav_bytes((tone(0.1) * 30000).astype("<i2"))
    from_file, _ = read_wav(write(tmp_path / "a.wav", data))
    from_bytes, _ = read_wav_bytes(data, "upload.wav")
    np.testing.assert_array_equal(from_file, from_bytes)


def test_expected_rate_matches(tmp_path: Path) -> None:
    path = write(tmp_path / "a.wav", wav_bytes(np.zeros(10, dtype="<i2"), rate=16000))
    assert read_wav(path, expected_rate=16000)[1] == 16000
    with pytest.raises(UserError) as excinfo:
        read_wav(path, expected_rate=8000)
    assert message_of(excinfo) == f"{path}: sample rate 16000 Hz, expected 8000 Hz"


@pytest.mark.parametrize(
    ("name", "data", "problem"),
    [
        ("notes.wav", b"just some text, not audio\n", "not a PCM WAV file"),
        ("zero.wav", b"", "not a WAV file"),
        ("silent.wav", wav_bytes(np.zeros(0, dtype="<i2")), "no audio samples"),
        ("wide.wav", wav_bytes(np.zeros(6, dtype="u1"), width=3), "24-bit samples are not supported"),
    ],
)
def test_bad_wav_is_one_line_naming_the_file(tmp_path: Path, name: str, data: bytes, problem: str) -> None:
    path = write(tmp_path / name, data)
    with pytest.raises(UserError) as excinfo:
        read_wav(path)
    assert message_of(excinfo).startswith(f"{path}: {problem}")
    with pytest.raises(UserError) as excinfo:
        read_wav_bytes(data, "upload.wav")
    assert message_of(excinfo).startswith(f"upload.wav: {problem}")


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(UserError) as excinfo:
        read_wav(tmp_path / "absent.wav")
    assert message_of(excinfo) == f"{tmp_path / 'absent.wav'}: no such file"
    with pytest.raises(UserError) as excinfo:
        read_wav(tmp_path)
    assert message_of(excinfo) == f"{tmp_path}: is a directory, expected a WAV file"


# Features


def test_features_have_one_frame_per_hop() -> None:
    settings = FeatureSettings()
    for seconds in (0.05, 0.5, 1.234):
        samples = tone(seconds)
        result = log_mel(samples, RATE, settings)
        assert result.dtype == np.float32
        assert result.shape == (1 + len(samples) // 80, 40)
        assert abs(len(result) - seconds * 100) <= 1


def test_features_are_deterministic_and_normalised() -> None:
    samples = tone(1.0)
    first = log_mel(samples, RATE, FeatureSettings())
    assert np.array_equal(first, log_mel(samples.copy(), RATE, FeatureSettings()))
    np.testing.assert_allclose(first.mean(axis=0), 0.0, atol=1e-4)
    np.testing.assert_allclose(first.std(axis=0), 1.0, atol=1e-3)


def test_normalisation_standardises_the_decibels() -> None:
    samples = tone(1.0)
    raw = log_mel(samples, RATE, FeatureSettings(normalise="none", bins=24))
    normalised = log_mel(samples, RATE, FeatureSettings(bins=24))
    assert raw.shape == normalised.shape == (101, 24)
    assert raw.max() - raw.min() <= features.TOP_DB + 1e-3
    np.testing.assert_allclose((raw - raw.mean(axis=0)) / raw.std(axis=0), normalised, atol=1e-4)


def test_digital_silence_gives_finite_features() -> None:
    samples = np.concatenate([np.zeros(4000, dtype=np.float32), tone(0.5)])
    assert np.isfinite(log_mel(samples, RATE, FeatureSettings())).all()


def test_feature_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="normalise"):
        FeatureSettings(normalise="global")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="16000 Hz"):
        log_mel(tone(0.1, rate=16000), 16000, FeatureSettings())


def test_stack_frames_concatenates_and_pads_with_the_last_frame() -> None:
    frames = np.arange(10 * 3, dtype=np.float32).reshape(10, 3)
    stacked = stack_frames(frames, 4)
    assert stacked.shape == (3, 12)
    np.testing.assert_array_equal(stacked[0], frames[0:4].reshape(-1))
    np.testing.assert_array_equal(stacked[2], np.concatenate([frames[8], frames[9], frames[9], frames[9]]))
    assert stack_frames(frames, 5).shape == (2, 15)
    np.testing.assert_array_equal(stack_frames(frames, 1), frames)
    with pytest.raises(ValueError):
        stack_frames(frames, 0)


# Digit strings


def test_parts_partition_the_recordings() -> None:
    everything = set(load_recordings())
    assert len(everything) == 3000
    for split in ("customary", "speaker"):
        parts = [set(split_recordings(split, part)) for part in PARTS]
        assert set().union(*parts) == everything
        assert sum(len(p) for p in parts) == len(everything)


def test_customary_split_by_index() -> None:
    assert {r.index for r in split_recordings("customary", "test")} == set(range(5))
    assert {r.index for r in split_recordings("customary", "validation")} == set(range(45, 50))
    assert {r.index for r in split_recordings("customary", "train")} == set(range(5, 45))


def test_speaker_split_holds_out_one_speaker() -> None:
    assert {r.speaker for r in split_recordings("speaker", "test")} == {HELD_OUT_SPEAKER}
    for part in ("train", "validation"):
        speakers = {r.speaker for r in split_recordings("speaker", part)}
        assert HELD_OUT_SPEAKER not in speakers
        assert len(speakers) == 5


def test_utterances_are_deterministic_for_a_seed() -> None:
    first = make_utterances("customary", "train", 20, seed=3)
    again = make_utterances("customary", "train", 20, seed=3)
    other = make_utterances("customary", "train", 20, seed=4)
    assert [u.text for u in first] == [u.text for u in again]
    assert all(np.array_equal(a.samples, b.samples) for a, b in zip(first, again))
    assert [u.recordings for u in first] != [u.recordings for u in other]


@pytest.mark.parametrize(("split", "part"), [(s, p) for s in ("customary", "speaker") for p in PARTS])
def test_utterances_use_one_speaker_of_their_part(split: str, part: str) -> None:
    for utterance in make_utterances(split, part, 40, seed=0):
        assert {r.speaker for r in utterance.recordings} == {utterance.speaker}
        assert all(part_of(split, r) == part for r in utterance.recordings)
        if split == "speaker":
            assert (utterance.speaker == HELD_OUT_SPEAKER) == (part == "test")


def test_utterance_text_samples_and_lengths() -> None:
    recordings = load_recordings()
    utterances = make_utterances("customary", "test", 50, seed=1, min_digits=2, max_digits=4)
    assert {len(u.recordings) for u in utterances} <= {2, 3, 4}
    for utterance in utterances:
        assert utterance.text == " ".join(str(r.digit) for r in utterance.recordings)
        assert utterance.sample_rate == RATE
        assert utterance.samples.dtype == np.float32
        speech = sum(len(recordings[r]) for r in utterance.recordings)
        gaps = len(utterance.samples) - speech
        assert 400 * (len(utterance.recordings) - 1) <= gaps <= 2000 * (len(utterance.recordings) - 1) + 1600
    assert len({u.speaker for u in utterances}) > 1


def test_bad_split_part_or_lengths() -> None:
    with pytest.raises(ValueError, match="split"):
        make_utterances("random", "train", 1, seed=0)
    with pytest.raises(ValueError, match="part"):
        make_utterances("customary", "dev", 1, seed=0)
    with pytest.raises(ValueError, match="min_digits"):
        make_utterances("customary", "train", 1, seed=0, min_digits=3, max_digits=2)


def test_bad_archive_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(UserError) as excinfo:
        load_recordings(tmp_path / "absent.tar.gz")
    assert message_of(excinfo).endswith("absent.tar.gz: no such file")
    with pytest.raises(UserError) as excinfo:
        load_recordings(write(tmp_path / "text.tar.gz", b"not an archive"))
    assert "text.tar.gz: not a readable FSDD archive" in message_of(excinfo)
    archive = tmp_path / "odd.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        data = wav_bytes(np.zeros(8, dtype="<i2"))
        member = tarfile.TarInfo("recordings/seven.wav")
        member.size = len(data)
        tar.addfile(member, io.BytesIO(data))
    with pytest.raises(UserError) as excinfo:
        load_recordings(archive)
    assert "odd.tar.gz:recordings/seven.wav: expected a name like" in message_of(excinfo)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """rnnsearch built as a wheel from this source tree and installed by pip into a folder of its own,
    as a user who is not working on the source gets it."""
    folder = tmp_path_factory.mktemp("installed")
    source = folder / "source"
    shutil.copytree(ROOT / "rnnsearch", source / "rnnsearch", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    offline = ["--no-deps", "--no-build-isolation", "--no-index"]
    subprocess.run([*pip, "wheel", *offline, "-w", str(folder / "wheel"), str(source)], check=True)
    [wheel] = (folder / "wheel").glob("rnnsearch-*.whl")
    subprocess.run([*pip, "install", *offline, "--target", str(folder / "site"), str(wheel)], check=True)
    return folder / "site"


def run_installed(site: Path, *arguments: str) -> subprocess.CompletedProcess:
    """Python with `site` as the only rnnsearch on the path: run from elsewhere than the source tree."""
    env = {**os.environ, "PYTHONPATH": str(site), "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, *arguments], cwd=site, env=env, capture_output=True, text=True)


def test_an_installed_package_has_the_recordings(installed: Path) -> None:
    script = "import rnnsearch.speech.digits as d; print(d.ARCHIVE); print(len(d.load_recordings()))"
    result = run_installed(installed, "-c", script)
    assert result.returncode == 0, result.stderr
    archive, count = result.stdout.split()
    assert Path(archive).is_relative_to(installed) and int(count) == len(load_recordings())
    assert (Path(archive).parent / "LICENSE").is_file() and (Path(archive).parent / "README.md").is_file()


def test_an_installed_package_without_the_recordings_says_so_in_one_line(installed: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    shutil.copytree(installed, site, ignore=shutil.ignore_patterns("fsdd-recordings.tar.gz"))
    model_dir = tmp_path / "run"
    command = ["-m", "rnnsearch", "train", str(SPEECH_CONFIG), "--set", f"train.model_dir={model_dir}"]
    result = run_installed(site, *command, "--set", f"data.cache_dir={tmp_path / 'cache'}")
    archive = site / "rnnsearch" / "speech" / "fsdd" / "fsdd-recordings.tar.gz"
    assert result.returncode == 1
    assert result.stderr == f"rnnsearch: error: {archive}: no such file; " + (
        "this rnnsearch was installed without its FSDD recordings: reinstall it\n"
    )


# Feature cache


@pytest.fixture
def counted_log_mel(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts calls of features.log_mel, the function that does the work."""
    calls = [0]
    original = features.log_mel

    def counting(*args, **kwargs):
        calls[0] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(features, "log_mel", counting)
    return calls


def test_cache_is_reused_and_identical(tmp_path: Path, counted_log_mel: list[int]) -> None:
    utterances = make_utterances("customary", "validation", 12, seed=0, max_digits=3)
    settings = FeatureSettings()
    first = cached_features(utterances, settings, tmp_path / "cache")
    assert counted_log_mel[0] == 12
    (cache_file,) = (tmp_path / "cache").iterdir()
    written = cache_file.stat().st_mtime_ns
    second = cached_features(utterances, settings, tmp_path / "cache")
    assert counted_log_mel[0] == 12
    assert cache_file.stat().st_mtime_ns == written
    expected = utterance_features(utterances, settings)
    for a, b, c in zip(first, second, expected):
        assert a.dtype == b.dtype == np.float32
        assert np.array_equal(a, c) and np.array_equal(b, c)


def test_cache_key_follows_settings_and_utterances(tmp_path: Path, counted_log_mel: list[int]) -> None:
    utterances = make_utterances("speaker", "test", 4, seed=0, max_digits=2)
    cached_features(utterances, FeatureSettings(), tmp_path)
    cached_features(utterances, FeatureSettings(bins=20), tmp_path)
    cached_features(utterances[:3], FeatureSettings(), tmp_path)
    assert counted_log_mel[0] == 4 + 4 + 3
    assert len(list(tmp_path.iterdir())) == 3


def test_corrupt_cache_is_recomputed(tmp_path: Path, counted_log_mel: list[int]) -> None:
    utterances = make_utterances("customary", "test", 3, seed=0, max_digits=2)
    expected = cached_features(utterances, FeatureSettings(), tmp_path)
    (cache_file,) = tmp_path.iterdir()
    cache_file.write_bytes(b"garbage")
    again = cached_features(utterances, FeatureSettings(), tmp_path)
    assert counted_log_mel[0] == 6
    assert all(np.array_equal(a, b) for a, b in zip(expected, again))
    assert cached_features(utterances, FeatureSettings(), tmp_path)[0].shape == expected[0].shape
    assert counted_log_mel[0] == 6


# Scores


def test_digit_error_rate() -> None:
    assert digit_error_rate(["1 3"], ["1 2 3"]).value == pytest.approx(100 / 3)
    assert digit_error_rate(["1 2 3", "4"], ["1 2 3", "4"]).value == 0.0
    assert digit_error_rate(["9 9", ""], ["1", "2 3"]).value == pytest.approx(100 * 4 / 3)
    score = digit_error_rate(["1 2 4", "5 6"], ["1 2 3", "5"])
    assert score.value == pytest.approx(50.0)
    assert "1 sub, 0 del, 1 ins" in score.signature and "4 digits of 2 strings" in score.signature


def test_string_accuracy() -> None:
    score = string_accuracy(["1 2 3", "4  5", "6"], ["1 2 3", "4 5", "7"])
    assert score.value == pytest.approx(200 / 3)
    assert "2 of 3 strings" in str(score)


def test_scores_check_their_input() -> None:
    with pytest.raises(ValueError, match="2 hypotheses but 1 references"):
        digit_error_rate(["1", "2"], ["1"])
    with pytest.raises(ValueError):
        string_accuracy([], [])
    with pytest.raises(ValueError):
        digit_error_rate([""], [""])
