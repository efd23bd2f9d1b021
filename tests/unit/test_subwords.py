"""Learning subword models: the vocabulary's reserved pieces."""

import pytest

from rnnsearch.errors import UserError
from rnnsearch.text.subwords import RESERVED_PIECES, train_subwords

TEXTS = ["ein Hund läuft", "zwei Hunde laufen", "ein Mann"] * 20


@pytest.mark.parametrize("kind", ["unigram", "bpe"])
def test_a_subword_vocabulary_must_have_room_beyond_its_reserved_pieces(kind: str) -> None:
    with pytest.raises(UserError) as excinfo:
        train_subwords(TEXTS, kind, RESERVED_PIECES)
    message = str(excinfo.value)
    assert message.startswith(f"subwords.vocab_size: {RESERVED_PIECES} is too small"), message
    assert f"a {kind} vocabulary reserves 260 pieces (4 special, 256 bytes)" in message
    subwords = train_subwords(TEXTS, kind, RESERVED_PIECES + 40)
    assert subwords.decode(subwords.encode(["ein Hund"])[0]) == "ein Hund"


def test_a_word_vocabulary_reserves_no_bytes() -> None:
    subwords = train_subwords(TEXTS, "word", 20)
    assert subwords.decode(subwords.encode(["ein Hund"])[0]) == "ein Hund"
