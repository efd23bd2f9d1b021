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


def test_each_piece_stands_where_the_decoded_text_writes_it() -> None:
    """Pieces' places in the decoded text in characters, not bytes, with a word start's
    space left out: a character of several bytes (byte pieces, or a piece such as "ö")
    does not shift what follows it, and a special piece stands where the text before it
    ends."""
    from rnnsearch.reserved import BOS, EOS, UNK

    vocabulary = train_subwords(["the dog runs on the field", "a man plays football"] * 20, "unigram", 300)
    text = "the dög ran, Fußball 中文 field"
    ids = [BOS, *vocabulary.encode([text])[0], UNK, EOS]
    decoded, spans = vocabulary.decode(ids), vocabulary.spans(ids)
    assert decoded == text
    assert spans[0] == (0, 0) and spans[-2:] == [(len(text), len(text))] * 2
    assert "".join(decoded[start:end] for start, end in spans) == text.replace(" ", "")
    pieces = [vocabulary.texts[i] for i in ids]
    for (start, end), piece in zip(spans, pieces, strict=True):
        if piece.strip():  # a piece of whole characters stands on its own text
            assert decoded[start:end] == piece.strip()
    written = [decoded[start:end] for start, end in spans]
    last = written.index("中")  # three byte pieces write it, at the last of them
    assert pieces[last - 2 : last + 1] == ["", "", ""] and written[last - 2 : last] == ["", ""]
