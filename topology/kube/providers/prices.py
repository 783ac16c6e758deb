"""The bundled on-demand price table: instance type (and region) → price per node-hour.

``data/prices.yaml`` is dated, names its public source per cloud (or per row: a
row's own ``asOf`` and ``source`` keys win) and is meant to be edited. A discovered
node group takes its price from here by the ``node.kubernetes.io/instance-type``
(and ``topology.kubernetes.io/region``) label of its template; a capacityweb.io
NodeGroup's ``pricePerNodeHour`` wins.
Every price carries the text saying where it came from, shown next to the
figure; a type the table lacks has no price, and that is said too.

Pure: reads only its own bundled file, once; no Django, no clock.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml

PRICES_FILE = Path(__file__).resolve().parents[2] / "data" / "prices.yaml"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
# a row may name its own date and source beside its per-region prices
ROW_KEYS = frozenset({"asOf", "source"})
REGION_LABEL = "topology.kubernetes.io/region"


@dataclass(frozen=True, slots=True)
class CloudPrices:
    cloud: str
    source: str
    as_of: str
    default_region: str
    by_type: Mapping[str, Mapping[str, float]]  # instance type → region → price
    # instance type → (asOf, source) of a row that names its own (the cloud's otherwise)
    row_sources: Mapping[str, tuple[str, str]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Price:
    per_node_hour: float
    source: str  # "aws on-demand us-east-1 as of 2024-06-01 (https://...)"


@dataclass(frozen=True, slots=True)
class PriceTable:
    currency: str
    clouds: tuple[CloudPrices, ...]

    def lookup(self, instance_type: str | None, region: str | None) -> Price | None:
        """The price of one node of ``instance_type`` in ``region``; None if not listed."""
        if not instance_type:
            return None
        for cloud in self.clouds:
            regions = cloud.by_type.get(instance_type)
            if not regions:
                continue
            if ANY_REGION in regions and not (region and region in regions):
                return Price(regions[ANY_REGION], f"{cloud.source}, every region")
            if region and region in regions:
                return Price(regions[region], _source(cloud, instance_type, region, ""))
            fallback = cloud.default_region if cloud.default_region in regions else min(regions)
            missing = f" (region {region} not in the table)" if region else " (region unknown)"
            return Price(regions[fallback], _source(cloud, instance_type, fallback, missing))
        return None

    def price_for_labels(self, labels: Mapping[str, str]) -> Price | None:
        return self.lookup(labels.get(INSTANCE_TYPE_LABEL), labels.get(REGION_LABEL))

    def with_overrides(self, overrides: Mapping[str, Any], cluster: str) -> PriceTable:
        """This table with one cluster's own prices first (``overrides``: instance type →
        price per node-hour, or region → price); ValueError naming the entry when one is
        not a finite number >= 0."""
        if not overrides:
            return self
        if not isinstance(overrides, Mapping):
            raise ValueError(
                f"Cluster/{cluster}: price_overrides: must map instance types to prices, "
                f"got {type(overrides).__name__}"
            )
        by_type = {str(k): _override_regions(cluster, str(k), v) for k, v in overrides.items()}
        own = CloudPrices(
            cloud="cluster",
            source=f"price override of cluster {cluster}",
            as_of="set on the cluster",
            default_region=ANY_REGION,
            by_type=by_type,
        )
        return PriceTable(currency=self.currency, clouds=(own, *self.clouds))


ANY_REGION = "any region"  # an override given as one figure for every region


def _override_regions(cluster: str, kind: str, value: Any) -> dict[str, float]:
    regions = value if isinstance(value, Mapping) else {ANY_REGION: value}
    checked = {}
    for region, price in regions.items():
        if isinstance(price, bool) or not isinstance(price, int | float) or not price >= 0:
            raise ValueError(
                f"Cluster/{cluster}: price_overrides.{kind}: must be a number >= 0 "
                f"(per node-hour) or a mapping of region to one, got {price!r}"
            )
        if price == float("inf"):
            raise ValueError(f"Cluster/{cluster}: price_overrides.{kind}: must be finite")
        checked[str(region)] = float(price)
    return checked


def _source(cloud: CloudPrices, instance_type: str, region: str, note: str) -> str:
    as_of, source = cloud.row_sources.get(instance_type, (cloud.as_of, cloud.source))
    return f"{cloud.cloud} on-demand {region}{note} as of {as_of} ({source})"


def table_from_dict(raw: Mapping[str, Any]) -> PriceTable:
    """A table from its YAML shape (the bundled file, or a user's edited copy)."""
    clouds = []
    for name, cloud in sorted((raw.get("clouds") or {}).items()):
        rows = (cloud.get("instanceTypes") or {}).items()
        by_type = {
            str(kind): {str(r): float(p) for r, p in (regions or {}).items() if r not in ROW_KEYS}
            for kind, regions in rows
        }
        row_sources = {
            str(kind): (str(regions["asOf"]), str(regions["source"]))
            for kind, regions in rows
            if regions and "asOf" in regions and "source" in regions
        }
        clouds.append(
            CloudPrices(
                cloud=str(name),
                source=str(cloud.get("source", "")),
                as_of=str(cloud.get("asOf", "")),
                default_region=str(cloud.get("defaultRegion", "")),
                by_type=by_type,
                row_sources=row_sources,
            )
        )
    return PriceTable(currency=str(raw.get("currency", "USD")), clouds=tuple(clouds))


@cache
def bundled_table() -> PriceTable:
    """The table shipped in ``topology/data/prices.yaml``."""
    return table_from_dict(yaml.safe_load(PRICES_FILE.read_text(encoding="utf-8")))


def table_in(currency: str) -> PriceTable:
    """The bundled table if it is in ``currency``; else an empty one (nothing is
    converted: a figure is never shown in a currency it was not given in)."""
    table = bundled_table()
    return table if table.currency == currency else PriceTable(currency=currency, clouds=())


def no_price_note(labels: Mapping[str, str]) -> str:
    """What a discovered group without a price says (shown as "price unknown", never 0/h)."""
    kind = labels.get(INSTANCE_TYPE_LABEL)
    what = f"instance type {kind}" if kind else "no instance-type label"
    return (
        f"price unknown ({what} not in the price table): totals leave it out and say so; "
        "set pricePerNodeHour"
    )
