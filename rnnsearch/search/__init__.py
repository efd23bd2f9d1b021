"""Approximate argmax_y p(y | x): greedy and beam search, both batched over sentences.

Greedy and beam search use the model's `encode`, `step` and `has_alignment`, and the
decoder state's row operations (`select`, `extend`, `without`, `tile_beams`,
`reorder_beams`) and its padding's shape (contract.py); only `fixed_shape` reads the
state's tensors themselves, to keep them in place for CUDA graphs.

Every search takes its options as one `SearchOptions` value and follows the rules in
rules.py and beam.py: `restrict` forbids tokens, `beam.accept` decides which of a
beam's extensions finish and which stay live, and `finished` builds each result and
its score; the fixed-shape searches call them in the form that reads nothing back.
`choice.choose_search` picks the search a call runs; arrivals.py lets sentences join
a batch in flight; constraints.py holds the per-sentence inputs (a forced prefix) and
keeps their state in step with the rows. Each name is imported from the module it lives in; the package itself
exports nothing.
"""
