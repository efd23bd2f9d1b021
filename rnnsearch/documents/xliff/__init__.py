"""XLIFF (.xlf, .xliff), 1.2 and 2.x, the files CAT tools exchange: the format
(format.py), each element's place in the file's bytes (extents.py), and a segment's inline
codes as elements of a line of markup and back (codes.py)."""
