"""int8 matrix products with one scale per row: fast, and the same whatever the batch.

ONNX Runtime's own dynamic quantisation gives a product's input one scale for the
whole tensor, so a sentence's translation would depend on the sentences decoded beside
it. Here every matrix product x W + b of a graph whose W is a constant becomes

    s_r = max_k |x_rk| / 127                   one scale per row of x
    x̂  = round(x / s_r)                         int8
    y   = (x̂ Ŵ) · s_r · t_o + b                 Ŵ = round(W / t_o), int8, t_o per column

with the integer product and the column scales applied by ONNX Runtime's
MatMulIntegerToFloat, and x̂ held as x̂ + 128 in uint8, the input its fast kernels
take. A row's result depends on that row alone, as in fp32, so batch invariance holds
for int8 too.

Left in fp32: products by a single column (the additive score's v_a: its input is the
largest tensor of a step, and quantising it would cost more than the product saves),
embeddings, and the encoder's recurrent operators.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper

LEVELS = 127.0  # symmetric int8: -127 … 127
OFFSET = 128  # x̂ is held as x̂ + 128 in uint8, the input type of the runtime's fast integer kernels
TINY = 1e-12  # the scale of an all-zero row, which then quantises to zeros


def quantise_graph(fp32_path: Path, int8_path: Path) -> int:
    """Write `fp32_path`'s graph with its constant-weight products in int8 to `int8_path`;
    return how many products were quantised."""
    model = onnx.load(str(fp32_path))
    graph = model.graph
    weights = {tensor.name: tensor for tensor in graph.initializer}
    nodes, count = [], 0
    for node in graph.node:
        product = _constant_product(node, weights)
        if product is None:
            nodes.append(node)
            continue
        weight, bias = product
        nodes.extend(_int8_product(node, weight, bias, graph))
        count += 1
    del graph.node[:]
    graph.node.extend(nodes)
    used = {name for node in graph.node for name in node.input}
    kept = [tensor for tensor in graph.initializer if tensor.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    if count and not any(entry.domain == "com.microsoft" for entry in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    onnx.save(model, str(int8_path))
    return count


def _constant_product(node: onnx.NodeProto, weights: dict) -> tuple[np.ndarray, str | None] | None:
    """(W as (in, out), the bias input or None) for a MatMul or plain Gemm by a constant
    matrix of more than one column; None for any other node."""
    if node.op_type == "MatMul" and node.input[1] in weights:
        weight = numpy_helper.to_array(weights[node.input[1]])
        return (weight, None) if weight.ndim == 2 and weight.shape[1] > 1 else None
    if node.op_type != "Gemm" or node.input[1] not in weights:
        return None
    attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    if attributes.get("transA", 0) or attributes.get("alpha", 1.0) != 1.0 or attributes.get("beta", 1.0) != 1.0:
        return None
    weight = numpy_helper.to_array(weights[node.input[1]])
    weight = weight.T if attributes.get("transB", 0) else weight
    bias = node.input[2] if len(node.input) > 2 and node.input[2] else None
    return (weight, bias) if weight.shape[1] > 1 else None


def _int8_product(node: onnx.NodeProto, weight: np.ndarray, bias: str | None, graph) -> list[onnx.NodeProto]:
    """The nodes that compute `node`'s output with per-row int8 inputs and per-column int8 weights."""
    name = node.name or node.output[0]
    x = node.input[0]
    column_scales = np.maximum(np.abs(weight).max(axis=0), TINY) / LEVELS
    quantised = np.clip(np.rint(weight / column_scales), -LEVELS, LEVELS).astype(np.int8)
    constants = {
        "weight": quantised,
        "column_scales": column_scales.astype(np.float32),
        "levels": np.array(LEVELS, dtype=np.float32),
        "tiny": np.array(TINY, dtype=np.float32),
        "low": np.array(-LEVELS, dtype=np.float32),
        "high": np.array(LEVELS, dtype=np.float32),
        "offset": np.array(OFFSET, dtype=np.float32),
        "zero_point": np.array(OFFSET, dtype=np.uint8),
        "one": np.array(1.0, dtype=np.float32),
    }
    for key, array in constants.items():
        graph.initializer.append(numpy_helper.from_array(array, f"{name}/int8/{key}"))

    def constant(key: str) -> str:
        return f"{name}/int8/{key}"

    def value(key: str) -> str:
        return f"{name}/int8/{key}:out"

    out = node.output[0]
    nodes = [
        helper.make_node("Abs", [x], [value("abs")]),
        helper.make_node("ReduceMax", [value("abs")], [value("row_max")], axes=[-1], keepdims=1),
        helper.make_node("Max", [value("row_max"), constant("tiny")], [value("row_max_safe")]),
        helper.make_node("Div", [value("row_max_safe"), constant("levels")], [value("row_scales")]),
        helper.make_node("Div", [x, value("row_scales")], [value("scaled")]),
        helper.make_node("Round", [value("scaled")], [value("rounded")]),
        helper.make_node("Clip", [value("rounded"), constant("low"), constant("high")], [value("clipped")]),
        helper.make_node("Add", [value("clipped"), constant("offset")], [value("shifted")]),
        helper.make_node("Cast", [value("shifted")], [value("x_uint8")], to=onnx.TensorProto.UINT8),
        helper.make_node(
            "MatMulIntegerToFloat",
            [value("x_uint8"), constant("weight"), constant("one"), constant("column_scales"), constant("zero_point")],
            [value("column_scaled")],
            domain="com.microsoft",
        ),
        helper.make_node("Mul", [value("column_scaled"), value("row_scales")], [value("product") if bias else out]),
    ]
    if bias:
        nodes.append(helper.make_node("Add", [value("product"), bias], [out]))
    for index, made in enumerate(nodes):
        made.name = f"{name}/int8/{index}"
    return nodes
