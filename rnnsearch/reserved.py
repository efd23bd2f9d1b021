"""The ids every vocabulary reserves, and their pieces: padding, unknown, begin- and
end-of-sentence; and the mark that begins a word's first piece. A leaf module, so that
text (which builds vocabularies), the model (which pads and masks), search, export and
word alignments share them without importing each other."""

PAD, UNK, BOS, EOS = 0, 1, 2, 3
SPECIAL_PIECES = ("<pad>", "<unk>", "<s>", "</s>")
WORD_START = "▁"
"""What begins the first piece of a word: SentencePiece's normalisation turns white space into it."""
