"""Word alignments: links read off the model's soft alignments (words.py), two
directions combined (symmetrisation.py), links turned into the piece links that guide
attention (guide.py), and alignments drawn as heatmaps (display.py)."""
