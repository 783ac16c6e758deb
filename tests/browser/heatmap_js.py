"""JavaScript snippets the browser tests share to read the drawn topology chart."""

# The traces of the chart's stacked bars (or its heatmap), without the idle reserved
# panel drawn beside the bars on an axis of its own (topology.charts.idle_reserved_panel).
STACKED_TRACES = (
    "document.getElementById('heatmap').data.filter(t => t.meta !== 'idle-reserved-panel')"
)
