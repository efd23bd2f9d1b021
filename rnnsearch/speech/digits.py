"""Spoken digit strings built from the Free Spoken Digit Dataset (fsdd/, shipped with the package).

FSDD holds single spoken digits: `recordings/{digit}_{speaker}_{index}.wav`, six
speakers, indices 0–49 for every digit and speaker, mono 8 kHz. An utterance here
concatenates 1–8 recordings of ONE speaker, so that the input is real speech whose
alignment with the target is monotonic, and its target is the digit string with
spaces ("4 0 7"). Between recordings lies 50–250 ms of silence, and 0–100 ms before
the first and after the last; silence is faint white noise at the level of the
quietest 10 ms of the recordings used, so that gaps sound like the recordings' own
background instead of digital zero, which no microphone produces. Everything is
deterministic given (split, part, seed).

Splits decide which recordings each part may use; utterances draw recordings with
replacement from their part, so parts never share a recording:

    customary  test: indices 0–4 (the split FSDD's README gives);
               validation: indices 45–49; train: indices 5–44
    speaker    test: every recording of the held-out speaker, theo;
               validation: indices 45–49 of the other five; train: indices 0–44 of them

In the speaker split, validation measures new recordings of known speakers, so the
test score (an unknown voice) is expected to be lower.

The archive is read once per process, in memory, without unpacking to disk.
"""

from __future__ import annotations

import random
import re
import tarfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import MappingProxyType

import numpy as np

from rnnsearch.config.data import SpokenDigitsConfig
from rnnsearch.errors import UserError
from rnnsearch.speech.audio import read_wav_bytes

ARCHIVE = Path(__file__).resolve().parent / "fsdd" / "fsdd-recordings.tar.gz"
"""The recordings, package data (pyproject.toml), so that an installed rnnsearch has them too."""
SAMPLE_RATE = SpokenDigitsConfig.sample_rate  # the recordings' own, which the data section declares
SPLITS = ("customary", "speaker")
PARTS = ("train", "validation", "test")
HELD_OUT_SPEAKER = "theo"
TEST_INDICES = range(0, 5)
VALIDATION_INDICES = range(45, 50)
GAP_MS = (50, 250)
EDGE_MS = (0, 100)
NOISE_FRAME_MS = 10

_REINSTALL = "; this rnnsearch was installed without its FSDD recordings: reinstall it"
_MEMBER = re.compile(r"recordings/(\d)_([a-z]+)_(\d+)\.wav")


@dataclass(frozen=True, order=True)
class Recording:
    """One FSDD recording: `digit` spoken by `speaker`, take number `index` (0–49)."""

    digit: int
    speaker: str
    index: int

    @property
    def name(self) -> str:
        return f"{self.digit}_{self.speaker}_{self.index}"


@dataclass(frozen=True, eq=False)
class Utterance:
    """A spoken digit string: mono float32 samples, and the digits as text ("4 0 7")."""

    samples: np.ndarray
    sample_rate: int
    text: str
    speaker: str
    recordings: tuple[Recording, ...]


def load_recordings(archive: str | Path = ARCHIVE) -> Mapping[Recording, np.ndarray]:
    """Every recording of the archive with its samples (read-only arrays), read once per process."""
    return _load(Path(archive).resolve())


@cache
def _load(archive: Path) -> Mapping[Recording, np.ndarray]:
    try:
        with tarfile.open(archive, "r:gz") as tar:
            recordings = dict(_read_member(tar, member, archive) for member in tar if _is_wav(member))
    except FileNotFoundError:
        raise UserError(f"{archive}: no such file{_REINSTALL if archive == ARCHIVE else ''}") from None
    except (tarfile.TarError, OSError, EOFError, zlib.error) as error:
        raise UserError(f"{archive}: not a readable FSDD archive ({error})") from None
    if not recordings:
        raise UserError(f"{archive}: no recordings/*.wav in the archive")
    return MappingProxyType(recordings)


def _is_wav(member: tarfile.TarInfo) -> bool:
    return member.isfile() and member.name.endswith(".wav")


def _read_member(tar: tarfile.TarFile, member: tarfile.TarInfo, archive: Path) -> tuple[Recording, np.ndarray]:
    origin = f"{archive}:{member.name}"
    match = _MEMBER.fullmatch(member.name)
    if match is None:
        raise UserError(f"{origin}: expected a name like recordings/DIGIT_SPEAKER_INDEX.wav")
    member_file = tar.extractfile(member)
    if member_file is None:
        raise UserError(f"{origin}: not a file in the archive")
    samples, _ = read_wav_bytes(member_file.read(), origin, expected_rate=SAMPLE_RATE)
    samples.flags.writeable = False
    return Recording(int(match[1]), match[2], int(match[3])), samples


def part_of(split: str, recording: Recording) -> str:
    """The part ("train", "validation" or "test") a recording belongs to in `split`."""
    _check_choice("split", split, SPLITS)
    if split == "speaker" and recording.speaker == HELD_OUT_SPEAKER:
        return "test"
    if split == "customary" and recording.index in TEST_INDICES:
        return "test"
    return "validation" if recording.index in VALIDATION_INDICES else "train"


def split_recordings(split: str, part: str, archive: str | Path = ARCHIVE) -> list[Recording]:
    """The recordings `part` of `split` may use, sorted."""
    _check_choice("part", part, PARTS)
    return sorted(r for r in load_recordings(archive) if part_of(split, r) == part)


def make_utterances(
    split: str,
    part: str,
    count: int,
    seed: int,
    archive: str | Path = ARCHIVE,
    min_digits: int = 1,
    max_digits: int = 8,
) -> list[Utterance]:
    """`count` digit-string utterances of `part` of `split`, the same for the same seed.

    Each utterance picks a speaker, a length in [min_digits, max_digits] and then that
    many recordings of the speaker, uniformly and with replacement.
    """
    if not 1 <= min_digits <= max_digits:
        raise ValueError(f"need 1 <= min_digits <= max_digits, got {min_digits} and {max_digits}")
    samples = load_recordings(archive)
    pools: dict[str, list[Recording]] = {}
    for recording in split_recordings(split, part, archive):
        pools.setdefault(recording.speaker, []).append(recording)
    rng = random.Random(f"fsdd:{split}:{part}:{seed}")
    speakers = sorted(pools)
    utterances = []
    for _ in range(count):
        pool = pools[rng.choice(speakers)]
        chosen = tuple(rng.choice(pool) for _ in range(rng.randint(min_digits, max_digits)))
        utterances.append(_utterance(chosen, samples, rng))
    return utterances


def _utterance(chosen: tuple[Recording, ...], samples: Mapping[Recording, np.ndarray], rng: random.Random) -> Utterance:
    noise = np.random.default_rng(rng.getrandbits(64))
    level = min(_quietest_frame_rms(samples[r]) for r in chosen)
    pieces = [_silence(noise, level, _samples_between(rng, EDGE_MS))]
    for position, recording in enumerate(chosen):
        if position:
            pieces.append(_silence(noise, level, _samples_between(rng, GAP_MS)))
        pieces.append(samples[recording])
    pieces.append(_silence(noise, level, _samples_between(rng, EDGE_MS)))
    return Utterance(
        samples=np.concatenate(pieces),
        sample_rate=SAMPLE_RATE,
        text=" ".join(str(r.digit) for r in chosen),
        speaker=chosen[0].speaker,
        recordings=chosen,
    )


def _samples_between(rng: random.Random, milliseconds: tuple[int, int]) -> int:
    low, high = (SAMPLE_RATE * ms // 1000 for ms in milliseconds)
    return rng.randint(low, high)


def _quietest_frame_rms(samples: np.ndarray) -> float:
    size = SAMPLE_RATE * NOISE_FRAME_MS // 1000
    frames = samples[: max(len(samples) // size, 1) * size].reshape(-1, min(size, len(samples)))
    return float(np.sqrt(np.mean(np.square(frames, dtype=np.float64), axis=1)).min())


def _silence(noise: np.random.Generator, level: float, length: int) -> np.ndarray:
    return (noise.standard_normal(length) * level).astype(np.float32)


def _check_choice(what: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"unknown {what} {value!r}; choose from {', '.join(choices)}")
