"""The commands' jobs over whole corpora and runs, each composing the library's steps:

    corpus_alignment.py  `align-corpus`: eflomal's word links for training corpora
    module_run.py        `train-aligner`: a module's whole run, trained and its jump table counted
    self_training.py     `self-train`: rounds of both directions' modules trained on their own links
    comparison.py        `compare`: variants of one config trained alike and compared

Each job is what one command runs; the command parses its arguments and says what came
of it, and Python code calls the job the same way."""
