import io
import os
import threading

import pytest

from rnnsearch.errors import UserError
from rnnsearch.text.stream import arriving_chunks


def test_a_pipe_fed_line_by_line_gives_each_line_before_the_next_is_written():
    read_end, write_end = os.pipe()
    with open(read_end, "rb") as reader, open(write_end, "wb", buffering=0) as writer:
        chunks = arriving_chunks(reader, "<stdin>", limit=100)
        writer.write(b"one\ntwo\nthr")
        assert next(chunks) == ["one", "two"]
        writer.write(b"ee\n")
        assert next(chunks) == ["three"]
        writer.write(b"four")
        threading.Timer(0.5, writer.close).start()
        assert next(chunks) == ["four"]
        assert next(chunks, None) is None


def test_a_file_comes_in_full_chunks_in_order_with_line_numbers_across_chunks():
    lines = [f"line {k}" for k in range(1, 8)]
    stream = io.BytesIO(("\n".join(lines) + "\r\n").encode())
    assert list(arriving_chunks(stream, "<stdin>", limit=3)) == [lines[0:3], lines[3:6], lines[6:]]
    with pytest.raises(UserError, match="<stdin>:5:"):
        list(arriving_chunks(io.BytesIO(b"a\nb\nc\nd\n\xff\n"), "<stdin>", limit=2))
    assert list(arriving_chunks(io.BytesIO(b""), "<stdin>", limit=2)) == []
