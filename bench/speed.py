"""Training and decoding speed of rnnsearch on this machine.

    python bench/speed.py [--config configs/peer_comparable.yaml] [--set section.key=value ...]
                          [--steps 60] [--model-dir runs/de-en] [--rounds 1] [--json out.json]
                          [--prepared runs/bench-speed/prepared]

Training: steady-state target tokens per second over `--steps` batches after a
warm-up, on the config's real training batches read from its prepared data (as
`rnnsearch train` reads them), from a freshly initialised model (`--steps 0` skips
training); with `--set train.guided_alignment_weight=λ` and a corpus that names its
alignments, the batches carry their word links and the loss adds the guided term, as in
training, and with `--set model.aligner=true` the loss adds the alignment module's,
replayed in the CUDA graphs too (the phases and FLOPs below stay those of the
cross-entropy alone).
Decoding: greedy and beam-5 sentences per second on a trained model's test set
(`--model-dir`; data.test of its config), the fastest of `--rounds` runs, with
detokenised BLEU, in the search precision of `--set search.precision=…` (default fp32).
Achieved GFLOP/s: the matrix-product FLOPs of a training step (forward and backward,
counted by torch.utils.flop_counter on the benchmark's batches) per target token, times
target tokens per second, next to the machine's sgemm speed measured in the same run.
Phases: mean milliseconds per step in the encoder, the decoder (recurrence, attention
and readout), the output layer and loss (with the output layer's own gradients, which
the fused loss computes in its forward pass), backward, and the optimizer, each timed
alone (under bfloat16 autocast with `--set train.precision=bf16`).
Peak RSS is the process's maximum resident set size; on CUDA also the peak GPU memory
held by tensors.
Device: the config's train.device (`--set train.device=cuda`; default auto), for
training and decoding alike. On CUDA in fp32 the decoder is replayed as CUDA graphs,
as the trainer does (`--set train.cuda_graphs=false`: eager); a first untimed pass over
the warm-up and timed batches captures their shapes, and its time is reported. On
CUDA the ceilings are the device's fp32 and bf16 matrix products, and every timed
region ends with a synchronisation.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import sys
import time
from itertools import islice
from pathlib import Path

import torch
from torch.utils.flop_counter import FlopCounterMode

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from processor import describe_cpu  # noqa: E402  (this script's folder comes first on sys.path)

import rnnsearch  # noqa: E402
from rnnsearch import kernels  # noqa: E402
from rnnsearch.config import load_config  # noqa: E402
from rnnsearch.evaluation.metrics import bleu  # noqa: E402
from rnnsearch.files.model_directory import load_model_files  # noqa: E402
from rnnsearch.model.seq2seq import build_model  # noqa: E402
from rnnsearch.prepared import PreparedPairs, ensure_prepared  # noqa: E402
from rnnsearch.text.batches import Batch, epoch_batches, make_batch  # noqa: E402
from rnnsearch.text.corpus import read_lines  # noqa: E402
from rnnsearch.text.subwords import PAD  # noqa: E402
from rnnsearch.training.environment import configure_cpu, flushing_denormals  # noqa: E402
from rnnsearch.training.graphed_loss import GraphedLoss  # noqa: E402
from rnnsearch.training.loop import StepContext, training_step  # noqa: E402
from rnnsearch.training.loss import Objective, output_layer_loss, sequence_loss  # noqa: E402
from rnnsearch.translation.translator import resolve_device  # noqa: E402


def clock(device: torch.device) -> float:
    """Seconds on a monotonic clock, once the device has finished the work queued so far."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return time.perf_counter()


def training_speed(config, steps: int, warmup: int, device: torch.device, prepared: Path) -> dict:
    """Steady-state training speed, achieved GFLOP/s, and where a step's time goes, on
    batches read from the prepared data in `prepared` (made there first if needed), as
    the trainer reads them, with the kernels the trainer chooses."""
    train = config.train
    chosen = kernels.choose(device, purpose="train", precision=train.precision, cuda_graphs=train.cuda_graphs)
    with kernels.use(chosen):
        return {"train_kernels": chosen.name, **_training_speed(config, steps, warmup, device, prepared)}


def _training_speed(config, steps: int, warmup: int, device: torch.device, prepared: Path) -> dict:
    src_sw, tgt_sw = ensure_prepared(config, prepared)
    pairs = PreparedPairs(prepared)
    torch.manual_seed(config.train.seed)
    model = build_model(config.model, len(src_sw), len(tgt_sw)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=config.train.learning_rate, fused=True)
    train = config.train
    epoch = epoch_batches(pairs, train.batch_tokens, train.max_batch_sentences, train.seed, 0)
    order = list(islice(epoch, warmup + steps))  # the batches of the warm-up and the timed steps
    model.train()
    objective = Objective.of(config)  # with guided alignment or the module's links, batches carry them, as in training

    def batch_of(indices) -> Batch:
        links = [pairs.links(i) for i in indices] if objective.guided else None
        return make_batch([pairs[i] for i in indices], links=links).to(device)

    graphed, capture_seconds = None, 0.0
    if kernels.active().cuda_graphs:
        graphed = GraphedLoss(model, objective, config.data.max_length + 1)
        started = clock(device)
        for indices in order:  # every shape of the timed batches captured before timing
            training_step(StepContext(model, optimizer, objective, train.clip_norm, graphed=graphed), batch_of(indices))
        capture_seconds = clock(device) - started
    tokens, started = 0, None
    for step, indices in enumerate(order):
        if step == warmup:
            tokens, started = 0, clock(device)
        _, n = training_step(
            StepContext(model, optimizer, objective, train.clip_norm, precision=train.precision, graphed=graphed),
            batch_of(indices),
        )
        tokens += n
    seconds = clock(device) - started
    sample = [make_batch([pairs[i] for i in indices]).to(device) for indices in order[warmup : warmup + min(steps, 20)]]
    tokens_per_second = tokens / seconds
    flops_per_token = training_flops(model, sample, config.train.label_smoothing) / sum(b.target_tokens for b in sample)
    return {
        "parameters": sum(p.numel() for p in model.parameters()),
        "vocab": [len(src_sw), len(tgt_sw)],
        "train_steps": steps,
        "train_target_tokens_per_s": tokens_per_second,
        "train_sentences_per_batch": sum(len(b) for b in order[warmup : warmup + steps]) / steps,
        "train_mflop_per_target_token": flops_per_token / 1e6,
        "train_achieved_gflops": flops_per_token * tokens_per_second / 1e9,
        **({"train_graph_shapes": len(graphed.graphed), "train_capture_pass_s": capture_seconds} if graphed else {}),
        **{f"phase_{name}_ms": value for name, value in step_phases(model, optimizer, sample, config).items()},
    }


def training_flops(model, batches, label_smoothing: float) -> float:
    """Floating-point operations of forward and backward passes over `batches`, as counted
    by torch.utils.flop_counter (matrix products: what a GEMM ceiling bounds)."""
    counter = FlopCounterMode(display=False)
    with counter:
        for batch in batches:
            loss, tokens = sequence_loss(model, batch, Objective(label_smoothing))
            (loss / tokens).backward()
    model.zero_grad(set_to_none=True)
    return counter.get_total_flops()


def step_phases(model, optimizer, batches, config) -> dict[str, float]:
    """Mean milliseconds per training step in each phase, timed one phase at a time."""
    totals = dict.fromkeys(("encoder", "decoder", "output_and_loss", "backward", "optimizer"), 0.0)
    bf16 = config.train.precision == "bf16"
    device = next(model.parameters()).device
    for batch in batches:
        marks = [clock(device)]
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):
            state = model.encode(batch.src, batch.src_lengths)
            marks.append(clock(device))
            readout, _ = model.decoder(batch.tgt_in, state)
            marks.append(clock(device))
            real = batch.tgt_out != PAD
            loss = output_layer_loss(
                readout[real], model.decoder.output_layer, batch.tgt_out[real], config.train.label_smoothing
            )
        marks.append(clock(device))
        optimizer.zero_grad(set_to_none=True)
        (loss / int(real.sum())).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), config.train.clip_norm)
        marks.append(clock(device))
        optimizer.step()
        marks.append(clock(device))
        for name, start, end in zip(totals, marks, marks[1:]):
            totals[name] += end - start
    return {name: 1000 * value / len(batches) for name, value in totals.items()}


def gemm_gflops(
    m: int, k: int, n: int, device: torch.device, dtype: torch.dtype = torch.float32, seconds: float = 1.0
) -> float:
    """Measured matrix-product speed for (m × k) @ (k × n) on `device`, in GFLOP/s."""
    a, b = torch.randn(m, k, device=device, dtype=dtype), torch.randn(k, n, device=device, dtype=dtype)
    for _ in range(3):
        torch.mm(a, b)
    repeats, started = 0, clock(device)
    while time.perf_counter() - started < seconds:
        for _ in range(10):
            torch.mm(a, b)
        repeats += 10
        clock(device)
    return 2 * m * k * n * repeats / (clock(device) - started) / 1e9


def gemm_ceiling(config, device: torch.device) -> dict:
    """The device's fp32 matrix-product speed in this run: large square, and at a decoder
    step's shape; on CUDA also bf16 (the tensor cores' rate, which bf16 training can reach)."""
    rows = config.train.max_batch_sentences or 64
    hidden = config.model.decoder.hidden_size
    square = 8192 if device.type == "cuda" else 2048
    ceilings = {
        "sgemm_square_gflops": gemm_gflops(square, square, square, device),
        "sgemm_decoder_step_gflops": gemm_gflops(rows, hidden, 3 * hidden, device),
    }
    if device.type == "cuda":
        ceilings["bf16_gemm_square_gflops"] = gemm_gflops(square, square, square, device, torch.bfloat16)
    return ceilings


def decoding_speed(model_dir: str, rounds: int, precision: str, device: torch.device) -> dict:
    """Sentences per second, the best of `rounds` runs, and BLEU of greedy and beam-5 search."""
    translator = rnnsearch.load(model_dir, device=str(device), precision=precision)
    test = load_model_files(model_dir)[0].data.test
    sources, references = read_lines(test.src), read_lines(test.tgt)
    results = {}
    for beam in (1, 5):
        fastest = math.inf
        for _ in range(rounds):
            started = clock(device)
            hypotheses = [t.text for t in translator.translate(sources, beam_size=beam)]
            fastest = min(fastest, clock(device) - started)
        name = "greedy" if beam == 1 else f"beam{beam}"
        results[f"{name}_sentences_per_s"] = len(sources) / fastest
        results[f"{name}_bleu"] = bleu(hypotheses, references).value
    return results


def machine(device: torch.device) -> str:
    """The processor or GPU the figures were measured on, in words."""
    if device.type == "cuda":
        return f"{torch.cuda.get_device_name(device)}, torch {torch.__version__}"
    return describe_cpu(torch.get_num_threads())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="configs/peer_comparable.yaml")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="config override")
    parser.add_argument("--steps", type=int, default=60, help="training steps to time; 0: decoding only")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--model-dir", help="trained model for the decoding figures")
    parser.add_argument(
        "--prepared", default="runs/bench-speed/prepared", help="the config's training data, prepared here and reused"
    )
    parser.add_argument("--rounds", type=int, default=1, help="decoding runs per search; the fastest counts")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    config = load_config(args.config, args.set)
    configure_cpu(config.train.threads)
    device = resolve_device(config.train.device, "train.device")
    results = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": machine(device),
        "config": " ".join([args.config, *args.set]),
    }
    if args.steps > 0:
        with flushing_denormals():
            results.update(training_speed(config, args.steps, args.warmup, device, Path(args.prepared)))
        results.update(gemm_ceiling(config, device))
        results["train_share_of_sgemm"] = results["train_achieved_gflops"] / results["sgemm_square_gflops"]
    if args.model_dir:
        results.update(decoding_speed(args.model_dir, args.rounds, config.search.precision, device))
    results["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if device.type == "cuda":
        results["peak_gpu_memory_mib"] = torch.cuda.max_memory_allocated(device) / 2**20
    for key, value in results.items():
        print(f"{key:32} {value:,.2f}" if isinstance(value, float) else f"{key:32} {value}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
