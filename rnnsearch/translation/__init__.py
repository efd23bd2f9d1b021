"""The Python API and its jobs: the Translator (translator.py) over the models it
assembles (assembly.py), translating text (text_translation.py), transcribing speech
(transcription.py), scoring and aligning given pairs (given_pairs.py), and the
step-by-step tensors of attention (steps.py)."""
