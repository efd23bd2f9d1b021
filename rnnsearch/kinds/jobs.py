"""What a kind of data asks of the translator whose jobs it runs (translating lines,
transcribing recordings, evaluating), as Protocols: the kinds stand below the
translator (rnnsearch.translation), which satisfies them, and name no class of it."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    import torch

    from rnnsearch.config.data import DataSection
    from rnnsearch.decoding.results import Translation
    from rnnsearch.search.rules import SearchOptions


class Searching(Protocol):
    """A call's request as a kind reads it: how its search runs."""

    @property
    def searched(self) -> SearchOptions: ...


RequestT = TypeVar("RequestT", bound=Searching)
"""The translator's request (rnnsearch.translation.request.Request)."""

RequestT_contra = TypeVar("RequestT_contra", bound=Searching, contravariant=True)
"""The same, as the translator takes it."""


class KindTranslator(Protocol[RequestT_contra]):
    """The translator as a kind runs its jobs: each kind calls the ones that read its inputs."""

    target_language: str

    @property
    def data(self) -> DataSection:
        """The model's data section, of this kind."""
        ...

    def translate_with(self, request: RequestT_contra, texts: Iterable[str]) -> list[Translation]: ...

    def translate_chunks_with(
        self,
        request: RequestT_contra,
        chunks: Iterable[Iterable[str]],
        *,
        prefix_chunks: Iterable[Iterable[str]] | None = None,
    ) -> Iterator[list[Translation]]: ...

    def transcribe_files(
        self, paths: Iterable[str], beam_size: int | None = None, n_best: int = 1
    ) -> list[Translation]: ...

    def translate_vectors(
        self, inputs: Iterable[torch.Tensor], names: Iterable[str], beam_size: int | None = None
    ) -> list[Translation]: ...
