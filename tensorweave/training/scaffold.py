"""`tf.train.Scaffold`: the init, ready, local-init, summary ops and saver of a model.

Follows TF 1.x `Scaffold` in `tensorflow/python/training/monitored_session.py`. `finalize()`
takes each missing piece from its graph collection (`INIT_OP`, `READY_OP`,
`READY_FOR_LOCAL_INIT_OP`, `LOCAL_INIT_OP`, `SUMMARY_OP`, `SAVERS`) or creates a default and
adds it there, so that several scaffolds of one graph share them; then it finalizes the
graph. Pieces passed to the constructor are not added to the collections.

tensorweave has no resource or lookup-table ops yet: the defaults cover variables, plus
whatever initializer ops sit in `TABLE_INITIALIZERS`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from tensorweave.framework import graph as graph_mod
from tensorweave.ops.variables import GraphKeys

_log = logging.getLogger(__name__)


def _coalesce(a: Any, b: Any) -> Any:
    return a if a is not None else b


class Scaffold:
    """Creates or gathers the pieces to initialize, check, save and summarize a model.

    Follows `tf.train.Scaffold`.

    Args:
      init_op: op initializing the global state (default: `global_variables_initializer`).
      init_feed_dict: feeds for running `init_op`.
      init_fn: `init_fn(scaffold, session)`, called after `init_op` on a fresh model.
      ready_op: 1-D string tensor, empty when the model is initialized (default:
        `report_uninitialized_variables()`).
      ready_for_local_init_op: 1-D string tensor, empty when `local_init_op` may run
        (default: `report_uninitialized_variables(global_variables())`).
      local_init_op: op initializing per-worker state (default: local variables and table
        initializers).
      summary_op: scalar string tensor of a `Summary` (default: `tf.summary.merge_all()`,
        None without summaries).
      saver: the `Saver` (default: the `SAVERS` item, else `Saver(sharded=True,
        allow_empty=True)`, i.e. one save op per variable device).
      copy_from_scaffold: a `Scaffold` whose pieces fill in the arguments left None.
      local_init_feed_dict: feeds for running `local_init_op`.

    Raises:
      TypeError: if `copy_from_scaffold` is not a `Scaffold`.
    """

    def __init__(
        self,
        init_op: Any = None,
        init_feed_dict: dict | None = None,
        init_fn: Callable[[Scaffold, Any], Any] | None = None,
        ready_op: Any = None,
        ready_for_local_init_op: Any = None,
        local_init_op: Any = None,
        summary_op: Any = None,
        saver: Any = None,
        copy_from_scaffold: Scaffold | None = None,
        local_init_feed_dict: dict | None = None,
    ):
        if copy_from_scaffold is not None:
            if not isinstance(copy_from_scaffold, Scaffold):
                raise TypeError("copy_from_scaffold is not a Scaffold instance.")
            src = copy_from_scaffold
            init_op = _coalesce(init_op, src.init_op)
            init_feed_dict = _coalesce(init_feed_dict, src.init_feed_dict)
            init_fn = _coalesce(init_fn, src._user_init_fn)
            ready_op = _coalesce(ready_op, src.ready_op)
            ready_for_local_init_op = _coalesce(
                ready_for_local_init_op, src.ready_for_local_init_op
            )
            local_init_op = _coalesce(local_init_op, src.local_init_op)
            local_init_feed_dict = _coalesce(local_init_feed_dict, src.local_init_feed_dict)
            summary_op = _coalesce(summary_op, src.summary_op)
            saver = _coalesce(saver, src.saver)
        # init_fn receives the scaffold, so that it can reach the saver.
        self._user_init_fn = init_fn
        self._init_fn = (lambda sess: init_fn(self, sess)) if init_fn else None
        self._init_op = init_op
        self._init_feed_dict = init_feed_dict
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._local_init_op = local_init_op
        self._local_init_feed_dict = local_init_feed_dict
        self._summary_op = summary_op
        self._saver = saver

    def finalize(self) -> Scaffold:
        """Creates the missing pieces, builds the saver and finalizes the default graph.

        Returns:
          self.

        Raises:
          RuntimeError: 'More than one item in the collection ...' when a collection holds
            several candidates.
        """
        from tensorweave import summary
        from tensorweave.ops import variables

        if self._init_op is None:
            self._init_op = Scaffold.get_or_default("init_op", GraphKeys.INIT_OP, _default_init_op)
        if self._ready_op is None:
            self._ready_op = Scaffold.get_or_default(
                "ready_op", GraphKeys.READY_OP, variables.report_uninitialized_variables
            )
        if self._ready_for_local_init_op is None:
            self._ready_for_local_init_op = Scaffold.get_or_default(
                "ready_for_local_init_op",
                GraphKeys.READY_FOR_LOCAL_INIT_OP,
                _default_ready_for_local_init_op,
            )
        if self._local_init_op is None:
            self._local_init_op = Scaffold.get_or_default(
                "local_init_op", GraphKeys.LOCAL_INIT_OP, Scaffold.default_local_init_op
            )
        if self._summary_op is None:
            self._summary_op = Scaffold.get_or_default(
                "summary_op", GraphKeys.SUMMARY_OP, summary.merge_all
            )
        if self._saver is None:
            self._saver = _get_saver_or_default()
        self._saver.build()
        graph_mod.get_default_graph().finalize()
        _log.info("Graph was finalized.")
        return self

    @property
    def init_fn(self) -> Callable[[Any], Any] | None:
        """`init_fn` bound to this scaffold: call it as `init_fn(session)`."""
        return self._init_fn

    @property
    def init_op(self) -> Any:
        """The init op (None before `finalize()` unless passed)."""
        return self._init_op

    @property
    def ready_op(self) -> Any:
        """The ready op (None before `finalize()` unless passed)."""
        return self._ready_op

    @property
    def ready_for_local_init_op(self) -> Any:
        """The ready-for-local-init op (None before `finalize()` unless passed)."""
        return self._ready_for_local_init_op

    @property
    def local_init_op(self) -> Any:
        """The local init op (None before `finalize()` unless passed)."""
        return self._local_init_op

    @property
    def local_init_feed_dict(self) -> dict | None:
        """Feeds for the local init op."""
        return self._local_init_feed_dict

    @property
    def summary_op(self) -> Any:
        """The merged summary op, or None."""
        return self._summary_op

    @property
    def saver(self) -> Any:
        """The `Saver` (None before `finalize()` unless passed)."""
        return self._saver

    @property
    def init_feed_dict(self) -> dict | None:
        """Feeds for the init op."""
        return self._init_feed_dict

    @staticmethod
    def get_or_default(
        arg_name: str, collection_key: str, default_constructor: Callable[[], Any]
    ) -> Any:
        """The single item of a collection, else `default_constructor()` added to it.

        A None from `default_constructor` is returned without being added.

        Raises:
          RuntimeError: if the collection holds more than one item.
        """
        graph = graph_mod.get_default_graph()
        elements = graph.get_collection(collection_key)
        if elements:
            if len(elements) > 1:
                raise RuntimeError(
                    f'More than one item in the collection "{collection_key}". Please indicate '
                    "which one to use by passing it to the tf.Scaffold constructor as:  "
                    f"tf.Scaffold({arg_name}=item to use)"
                )
            return elements[0]
        op = default_constructor()
        if op is not None:
            graph.add_to_collection(collection_key, op)
        return op

    @staticmethod
    def default_local_init_op() -> Any:
        """The default local init op (follows `Scaffold.default_local_init_op`).

        `local_variables_initializer()` grouped with the `TABLE_INITIALIZERS` and the
        initializers of the `LOCAL_RESOURCES`.
        """
        from tensorweave.ops import control_flow_ops, variables

        graph = graph_mod.get_default_graph()
        extra = list(graph.get_collection(GraphKeys.TABLE_INITIALIZERS))
        extra += [
            r.initializer
            for r in graph.get_collection(GraphKeys.LOCAL_RESOURCES)
            if hasattr(r, "initializer")
        ]
        return control_flow_ops.group(variables.local_variables_initializer(), *extra)


def _default_init_op() -> Any:
    from tensorweave.ops import control_flow_ops, variables

    graph = graph_mod.get_default_graph()
    extra = [
        r.initializer
        for r in graph.get_collection(GraphKeys.RESOURCES)
        if hasattr(r, "initializer")
    ]
    return control_flow_ops.group(variables.global_variables_initializer(), *extra)


def _default_ready_for_local_init_op() -> Any:
    from tensorweave.ops import variables

    return variables.report_uninitialized_variables(variables.global_variables())


def _get_saver_or_default() -> Any:
    """The single `SAVERS` item, else a new `Saver(sharded=True, allow_empty=True)` in it.

    Follows `saver._get_saver_or_default`.

    Raises:
      RuntimeError: if `SAVERS` holds more than one item.
    """
    from tensorweave.training.saver import Saver

    graph = graph_mod.get_default_graph()
    savers = graph.get_collection(GraphKeys.SAVERS)
    if savers:
        if len(savers) > 1:
            raise RuntimeError(
                f"More than one item in collection {GraphKeys.SAVERS}. Please indicate which "
                "one to use by passing it to the constructor."
            )
        return savers[0]
    saver = Saver(sharded=True, allow_empty=True)
    graph.add_to_collection(GraphKeys.SAVERS, saver)
    return saver


__all__ = ["Scaffold"]
