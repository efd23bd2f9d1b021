"""What every translation job and validation share: sources searched into Translations
(decoding.py), given pairs teacher-forced (forced.py), what the encoder reads
(inputs.py), and the results handed back (results.py)."""
