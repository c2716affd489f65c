"""Reads of a reference variable that a control dependency orders after a write see it.

In TensorFlow, `v/read` (an `Identity` of a ref variable) forwards the variable's buffer
without copying, and `Assign*` ops update that buffer in place; so in

    bump = tf.assign_add(v, 10.)
    with tf.control_dependencies([bump]):
        out = tf.identity(v)        # Identity(v/read), ^bump

`out` is 11.0: it runs after `bump` and forwards the (updated) buffer. The TF1 idiom
`with tf.control_dependencies([update]): return tf.identity(var)` (moving averages,
batch-norm statistics, "return the value after the train op") relies on it.

tensorweave's variables are copy-on-write (a read never sees a torn update), so `v/read`
holds the value of the moment it ran. To give the same results, a step's pruned graph is
rewritten: a node with control inputs that reads a variable through such an `Identity`, where
some control-input ancestor writes that variable, gets a fresh `Identity` of the variable
carrying the node's control inputs, so it reads after the write. Other readers of `v/read`
keep reading the value of their moment, as TF's would when they run before the write.
"""

from __future__ import annotations

from tensorweave.runtime.node_spec import NodeSpec


def _read_source(node: NodeSpec, by_name: dict[str, NodeSpec]) -> str | None:
    """The tensor name of the ref variable `node` reads, if it is an Identity of one."""
    if node.op != "Identity":
        return None
    inputs = node.data_inputs()
    if len(inputs) != 1:
        return None
    src, idx = inputs[0]
    producer = by_name.get(src)
    if producer is None or idx >= len(producer.output_dtypes):
        return None
    return f"{src}:{idx}" if producer.output_dtypes[idx]._is_ref_dtype else None


def _written(node: NodeSpec) -> set[str]:
    refs = node.ref_inputs
    return {
        f"{src}:{idx}"
        for (src, idx), is_ref in zip(node.data_inputs(), refs)
        if is_ref and node.op != "Identity"
    }


def order_reads_after_writes(nodes: list[NodeSpec]) -> list[NodeSpec]:
    """`nodes` with fresh variable reads where a control dependency orders a write first."""
    by_name = {n.name: n for n in nodes}
    reads = {n.name: v for n in nodes if (v := _read_source(n, by_name)) is not None}
    if not reads:
        return nodes
    candidates = [
        n for n in nodes
        if n.control_inputs() and any(src in reads for src, _ in n.data_inputs())
    ]
    if not candidates:
        return nodes
    writes: dict[str, set[str]] = {}  # node -> variables written by it or an ancestor

    def written_before(name: str) -> set[str]:
        stack, seen, out = [name], set(), set()
        while stack:
            cur = stack.pop()
            if cur in seen or cur not in by_name:
                continue
            seen.add(cur)
            if cur in writes:
                out |= writes[cur]
                continue
            node = by_name[cur]
            out |= _written(node)
            stack.extend(n[1:] if n.startswith("^") else n.split(":")[0] for n in node.inputs)
        writes[name] = out
        return out

    replaced: dict[str, NodeSpec] = {}
    extra: dict[str, list[NodeSpec]] = {}
    for node in candidates:
        before: set[str] = set()
        for c in node.control_inputs():
            before |= written_before(c)
        new_inputs = list(node.inputs)
        for i, name in enumerate(node.inputs):
            src = name.split(":")[0]
            if name.startswith("^") or src not in reads or reads[src] not in before:
                continue
            read = by_name[src]
            fresh = read.copy(
                name=f"{read.name}/_after_{node.name}",
                inputs=[read.inputs[0]] + ["^" + c for c in node.control_inputs()],
            )
            extra.setdefault(node.name, []).append(fresh)
            new_inputs[i] = fresh.name
        if new_inputs != node.inputs:
            replaced[node.name] = node.copy(inputs=new_inputs)
    if not replaced:
        return nodes
    out: list[NodeSpec] = []
    for n in nodes:
        out.extend(extra.get(n.name, []))
        out.append(replaced.get(n.name, n))
    return out
