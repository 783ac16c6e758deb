"""Scoring the nodes for a pod: the score columns of the index (``column``), the
scores as arrays over every node (``vector_scores``; FGD's looked up per node key,
``_keyed_scores``), the memoised score of one node (``_memo_score``), the full
score of one node (``_score_node``) and the device options they rate."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import partial

import numpy as np

from topology.model.hardware import GpuRequest, Pod

from .. import fgd, vector
from ..allocate import (
    Option,
    claim_takes,
    gpu_device_state,
    gpu_fit_key,
    gpu_fits,
    gpu_options,
)
from ..caches import Layout
from ..filters import POD_RULES, RESOURCE_RULES
from ..memo import NO_SCORE
from ..records import NodeAlloc, NodeInfo, device_gpu_milli
from ..scores import POD_INPUTS, SCORE_RULES, Candidate, ScoreContext
from .base import PickerBase


class NodeScoring(PickerBase):
    """The picker's scores: per node, per memo key, per column or as arrays."""

    def column(self, pod: Pod, shape: int) -> tuple[list[float], Sequence[int]]:
        """Every indexed node's score for the pod's shape (see ``ScoreIndex.column``).

        A new column scores one node per memo key among the nodes passing the static
        rules (``ScoreIndex.fill``): hundreds of shapes then cost shapes × distinct
        keys, not shapes × nodes; the nodes' keys are kept per static needs. What a
        new column scores is not kept in the memo too: the column holds it, and
        thousands of shapes × keys would double the memory (the memo keeps what
        later refreshes score, the nodes that changed)."""
        index = self.index
        assert index is not None
        score = partial(self._memo_score, pod=pod, shape=shape)
        if index.has(shape):
            return index.column(shape, score)
        only = (
            self.layout.matching(pod.node_selector)
            if pod.node_selector
            else range(len(index.names))
        )
        keys = index.node_keys(self._needs_of(pod), partial(self._passing_key, pod=pod), only)
        return index.fill(shape, keys, partial(score, keep=False))

    def vector_scores(self, pod: Pod) -> vector.Floats:
        """Every indexed node's score for the pod as an array (``vector``: the policy's
        rules over arrays kept up to date from the index's change log), NO_SCORE where
        it does not fit: the values ``column`` finds, without a column kept per shape."""
        assert self.vector
        table, feasible = self.feasible(pod)
        if vector.keyed(self.policy):
            return self._keyed_scores(pod, table, feasible)
        return vector.scores(self.policy, pod, table, feasible)

    def feasible(self, pod: Pod) -> tuple[vector.NodeTable, vector.Bools]:
        """The index's node table and which of its nodes the pod fits (every filter a
        memoisable pod meets: resources, static rules, GPUs), as arrays kept up to date
        from the index's change log (``vector``): where it is False, ``_memo_score`` is
        None."""
        index = self.index
        assert index is not None
        table = index.table(self._read, self._gpu_fits, self._node_inputs)
        names = index.names
        feasible = vector.fits(pod, table, self._extended_free(pod, table))
        feasible &= self._static_mask(pod, table, names)
        if pod.gpu is not None and pod.gpu.count > 0:
            feasible &= table.gpu_mask(pod.gpu, names, self._gpu_fits)
        return table, feasible

    def _extended_free(self, pod: Pod, table: vector.NodeTable) -> dict[str, vector.Ints]:
        """Each extended resource the pod asks for: its free amount on every node."""
        assert self.index is not None
        names = self.index.names
        return {r: table.extended_free(r, names, self._read) for r in pod.requests.extended}

    def _keyed_scores(
        self, pod: Pod, table: vector.NodeTable, feasible: vector.Bools
    ) -> vector.Floats:
        """FGD's score of every node (``vector.keyed``): each feasible node's kept score
        for its (node inputs, GPU request, cpu bucket), looked up by one integer per
        node; one not kept yet is worked out from the node's device choices, kept per
        (node inputs, GPU request) (nodes with equal inputs score alike:
        ``fgd.fgd_node_inputs``)."""
        fragmentation = self._base.fragmentation
        assert isinstance(fragmentation, fgd.FragmentationModel)
        inputs, stride = vector.fgd_inputs(pod, table, fragmentation)
        positions = np.flatnonzero(feasible)
        codes = (table.keys[positions] * stride + inputs[positions]).tolist()
        kept = self._by_code.setdefault(pod.gpu, {})
        get = kept.get
        values = [get(code) for code in codes]
        if None in values:
            names = self._index_names()
            for i, value in enumerate(values):
                if value is None:
                    position = int(positions[i])
                    found = self._choices(names[position], pod, int(table.keys[position]))
                    bucket = int(inputs[position])
                    score = fgd.score_in_bucket(fragmentation, found, bucket)
                    values[i] = kept[codes[i]] = score
        scores = np.full(table.size, NO_SCORE)
        scores[positions] = values
        return scores

    def _choices(self, name: str, pod: Pod, node_inputs: int) -> fgd.Choices:
        """FGD's view of the node's distinct device choices for the pod's GPU request
        (``fgd.Choices``), kept per (node inputs, GPU request): nodes alike there have
        the same choices, position for position (``fgd.fgd_node_inputs``)."""
        key = (node_inputs, pod.gpu)
        found = self._fgd_choices.get(key)
        if found is None:
            info, alloc = self.state.info(name), self.state.alloc(name)
            options = self._device_options(info, alloc, pod)
            assert not isinstance(options, str)  # feasible: the GPU mask passed
            candidates = [
                Candidate(info, alloc, pod, o, _option_gpu_milli(info, o)) for o in options
            ]
            fragmentation = self._base.fragmentation
            assert isinstance(fragmentation, fgd.FragmentationModel)
            found = self._fgd_choices[key] = fgd.choices(_distinct(candidates), fragmentation)
        return found

    def _node_inputs(self, name: str, devices: list[tuple[object, ...]]) -> int:
        """FGD's interned node inputs (``fgd.fgd_node_inputs``): what its kept scores are
        looked up by; 0 for a policy scored by array rules."""
        if not vector.keyed(self.policy):
            return 0
        info, alloc = self.state.info(name), self.state.alloc(name)
        inputs = fgd.fgd_node_inputs(info, alloc, self._base, devices)
        return self._keys.intern(("node inputs", inputs))

    def _static_mask(self, pod: Pod, table: vector.NodeTable, names: Sequence[str]) -> vector.Bools:
        """Which nodes pass the static rules for the pod. A nodeSelector is one condition
        of NodeAffinity, and no other static rule reads it: the mask is the one of the
        pod's other static needs and the nodes whose labels hold the selector (kept with
        the node list), so selectors naming a GPU model share the rest of the work."""
        if not pod.node_selector:
            return table.static_mask(
                self._needs_of(pod), names, partial(self._static_passes, pod=pod)
            )
        plain = self._without_selector.get(id(pod))
        if plain is None or plain[0] is not pod:
            plain = self._without_selector[id(pod)] = (pod, replace(pod, node_selector={}))
        rest = table.static_mask(
            self._needs_of(plain[1]), names, partial(self._static_passes, pod=plain[1])
        )
        selector = tuple(sorted(pod.node_selector.items()))
        layout = Layout.of(self._cluster, self.state)  # this node list's, nodes added or not
        return rest & table.selector_mask(selector, layout.matching(pod.node_selector))

    def _read(self, name: str) -> tuple[NodeInfo, NodeAlloc]:
        return self.state.info(name), self.state.alloc(name)

    def _static_passes(self, name: str, pod: Pod) -> bool:
        return self._static_ok(self.state.info(name), self.state.alloc(name), pod)

    def _gpu_fits(self, name: str, key: tuple[object, ...] | None, request: GpuRequest) -> bool:
        """Whether the node's GPUs hold the request (``allocate.gpu_fits``), kept per
        ``allocate.gpu_fit_key``: nodes alike there get one verdict."""
        if key is None:
            key = gpu_fit_key(gpu_device_state(self.state.info(name), self.state.alloc(name)))
        verdict = self._gpu_fit.get((key, request))
        if verdict is None:
            info, alloc = self.state.info(name), self.state.alloc(name)
            verdict = self._gpu_fit[key, request] = gpu_fits(info, alloc, request)
        return verdict

    def _passing_key(self, name: str, pod: Pod) -> int | None:
        """The node's memo key, or None when a static rule refuses the pod there."""
        info, alloc = self.state.info(name), self.state.alloc(name)
        return self._node_key(name) if self._static_ok(info, alloc, pod) else None

    def _memo_score(
        self, name: str, pod: Pod, shape: int, keep: bool = True
    ) -> tuple[float, int] | None:
        """The node's score without gang closeness; labels (selector, affinity) are
        checked per node first, the rest depends on the node key only (``keep``:
        store a new score in the memo)."""
        info, alloc = self.state.info(name), self.state.alloc(name)
        if not self._static_ok(info, alloc, pod):
            return None
        node_key = self._node_key(name)
        key = (shape, node_key)
        if key in self._memo:
            return self._memo[key]
        scored = self._keyed_score(info, alloc, pod, node_key)
        if keep:
            self._memo[key] = scored
        return scored

    def _keyed_score(
        self, info: NodeInfo, alloc: NodeAlloc, pod: Pod, node_key: int
    ) -> tuple[float, int] | None:
        """``_score_node`` with the base context for a memoisable pod that passed the
        static rules, sharing across pod shapes what depends only on the node key and
        the pod's GPU request: its device options and, for a policy that says what
        else its score reads of the pod (``Policy.pod_inputs``: FGD reads only the cpu
        left), the score itself. Hundreds of shapes differ mostly in cpu and memory,
        so each shape then costs the resource rules and lookups on most nodes."""
        for rule in RESOURCE_RULES:
            if not rule(info, alloc, pod, self.filters).ok:
                return None
        reads = self.policy.pod_inputs
        reduced = None
        if reads is not None:
            inputs = POD_INPUTS[reads](pod, alloc, self._base)
            reduced = (node_key, pod.gpu, inputs)
            if reduced in self._by_inputs:
                return self._by_inputs[reduced]
        options = self._gpu_options.get((node_key, pod.gpu))
        if options is None:
            options = self._gpu_options[node_key, pod.gpu] = self._device_options(info, alloc, pod)
        if isinstance(options, str):
            scored = None
        elif self.policy.device_rule is not None:
            scored = self._rate_chosen(info, alloc, pod, node_key, options)
        else:
            candidates = [
                Candidate(info, alloc, pod, o, _option_gpu_milli(info, o)) for o in options
            ]
            scored = self._rate(candidates, self._base)
        if reduced is not None:
            self._by_inputs[reduced] = scored
        return scored

    def _candidates(self, name: str, pod: Pod) -> list[Candidate] | None:
        info = self.state.info(name)
        alloc = self.state.alloc(name)
        if not self._static_ok(info, alloc, pod):
            return None
        for rule in RESOURCE_RULES:
            if not rule(info, alloc, pod, self.filters).ok:
                return None
        if pod.host_ports or self._inter_pod.sensitive(pod):
            context = self._context(pod)
            if not all(rule(info, alloc, pod, context).ok for rule in POD_RULES):
                return None
        options = self._device_options(info, alloc, pod)
        if isinstance(options, str):
            return None
        return [Candidate(info, alloc, pod, o, _option_gpu_milli(info, o)) for o in options]

    def _score_node(
        self, name: str, pod: Pod, ctx: ScoreContext | None = None
    ) -> tuple[float, int] | None:
        """The node's score and the index of the device option it would use."""
        candidates = self._candidates(name, pod)
        if candidates is None:
            return None
        return self._rate(candidates, ctx or self.scores)

    def _rate_chosen(
        self, info: NodeInfo, alloc: NodeAlloc, pod: Pod, node_key: int, options: list[Option]
    ) -> tuple[float, int]:
        """``_rate`` for a policy whose device rule picks the option: the rule reads the
        node and the devices taken, never the pod's other requests, so its pick is kept
        per (node key, GPU request) and only the chosen candidate is scored."""
        assert self.policy.device_rule is not None
        chosen = self._device_choice.get((node_key, pod.gpu))
        if chosen is None:
            device_rule = SCORE_RULES[self.policy.device_rule]
            candidates = [
                Candidate(info, alloc, pod, o, _option_gpu_milli(info, o)) for o in options
            ]
            chosen = max(
                range(len(candidates)), key=lambda i: device_rule(candidates[i], self._base)
            )
            self._device_choice[node_key, pod.gpu] = chosen
        option = options[chosen]
        candidate = Candidate(info, alloc, pod, option, _option_gpu_milli(info, option))
        return self.policy.score(candidate, self._base), chosen

    def _rate(self, candidates: list[Candidate], ctx: ScoreContext) -> tuple[float, int]:
        """The policy's best candidate: its score and option index."""
        if self.policy.device_rule is None:
            scores = [self.policy.score(c, ctx) for c in _distinct(candidates)]
            best = max(range(len(scores)), key=lambda i: scores[i])
            return scores[best], _distinct_index(candidates, best)
        device_rule = SCORE_RULES[self.policy.device_rule]
        index = max(range(len(candidates)), key=lambda i: device_rule(candidates[i], ctx))
        return self.policy.score(candidates[index], ctx), index

    def _device_options(self, info: NodeInfo, alloc: NodeAlloc, pod: Pod) -> list[Option] | str:
        options: list[Option] = [()]
        if pod.gpu is not None and pod.gpu.count > 0:
            found = gpu_options(info, alloc, pod.gpu)
            if isinstance(found, str):
                return found
            options = found
        if pod.claims:
            filters = self.filters
            takes = claim_takes(
                info, alloc, pod, filters.device_classes, filters.partitionable_devices
            )
            if isinstance(takes, str):
                return takes
            options = [(*o, *takes) for o in options]
        return options


def _free_signature(candidate: Candidate) -> tuple[int, ...]:
    alloc, devices = candidate.alloc, candidate.info.devices
    return tuple(alloc.device_milli_free(devices[t.device]) for t in candidate.devices)


def _distinct(candidates: list[Candidate]) -> list[Candidate]:
    """One candidate per distinct free-capacity pattern: equal GPUs score equally."""
    seen: set[tuple[int, ...]] = set()
    kept = []
    for candidate in candidates:
        signature = _free_signature(candidate)
        if signature not in seen:
            seen.add(signature)
            kept.append(candidate)
    return kept


def _distinct_index(candidates: list[Candidate], distinct_position: int) -> int:
    target = _free_signature(_distinct(candidates)[distinct_position])
    return next(i for i, c in enumerate(candidates) if _free_signature(c) == target)


def _option_gpu_milli(info: NodeInfo, option: Option) -> int:
    total = 0
    for take in option:
        device = info.devices[take.device]
        if device.gpu is not None:
            total += device_gpu_milli(device, take, info)
    return total
