"""The ids every vocabulary reserves, and their pieces: padding, unknown, begin- and
end-of-sentence. A leaf module, so that text (which builds vocabularies), the model
(which pads and masks), search and export share them without importing each other."""

PAD, UNK, BOS, EOS = 0, 1, 2, 3
SPECIAL_PIECES = ("<pad>", "<unk>", "<s>", "</s>")
