"""Where the additive score's time goes in a beam search step on the CPU.

    python bench/energies.py [--sentences 64] [--beam 5] [--source 20] [--size 512]

Times the energies e_ij = v_aᵀ tanh(W_a s_i + U_a h_j) of one decoder step at a beam
search's shape (sentences × beam queries against sentences × source keys, n = size) as
the CPU search kernel computes them (`kernels.additive.from_sigmoid`), and each of its
passes alone: the addition, the σ over the (sentences, beam, source, n) tensor, and the
product by v_a. Then the σ alone over the same number of values in pieces small enough
to stay in the core's cache: if that takes as long as the σ over the whole tensor, the
σ is bound by arithmetic, not by memory, and fusing the passes into one can save at
most the other passes' time.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from packing import seconds_per_call  # noqa: E402  (this script's folder comes first on sys.path)
from processor import describe_cpu  # noqa: E402

from rnnsearch.kernels.additive import from_sigmoid  # noqa: E402

CACHED_ROWS = 256  # rows of n values per piece of the cached σ: 512 KiB at n = 512


@torch.no_grad()
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sentences", type=int, default=64)
    parser.add_argument("--beam", type=int, default=5)
    parser.add_argument("--source", type=int, default=20, help="source positions")
    parser.add_argument("--size", type=int, default=512, help="n, the alignment model's hidden size")
    args = parser.parse_args()
    generator = torch.Generator().manual_seed(0)
    keys = torch.randn(args.sentences, args.source, args.size, generator=generator)
    queries = torch.randn(args.sentences, args.beam, args.size, generator=generator)
    v = torch.randn(args.size, generator=generator)
    hidden = torch.add(keys.unsqueeze(1), queries.unsqueeze(2))
    pieces = [torch.randn(CACHED_ROWS, args.size, generator=generator) for _ in range(2)]
    count = hidden.numel() // pieces[0].numel()
    timings = {
        "energies, σ form (all passes)": seconds_per_call(from_sigmoid, queries, keys, v, calls=50),
        "  addition W_a s_i + U_a h_j": seconds_per_call(
            lambda: torch.add(keys.unsqueeze(1), queries.unsqueeze(2), out=hidden), calls=50
        ),
        "  σ over the whole tensor": seconds_per_call(hidden.sigmoid_, calls=50),
        "  product by v_a": seconds_per_call(torch.matmul, hidden, v, calls=50),
        "σ over as many values, in cached pieces": seconds_per_call(
            lambda: [pieces[k % 2].sigmoid_() for k in range(count)], calls=50
        ),
    }
    shape = f"{args.sentences} × {args.beam} × {args.source} × {args.size}"
    print(f"{describe_cpu(torch.get_num_threads())}; tensor {shape} ({hidden.numel() * 4 / 2**20:.1f} MiB)")
    for name, seconds in timings.items():
        print(f"{name:42s} {seconds * 1e3:7.3f} ms")


if __name__ == "__main__":
    main()
