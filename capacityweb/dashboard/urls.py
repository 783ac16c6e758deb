"""Routes of the dashboard pages that join the apps: the overview ("/"), the topology
heatmap, the node groups, the queues, the autoscaler events, the workload page and the help page."""

from django.urls import path

from capacityweb.dashboard import (
    autoscaler_events,
    help_page,
    nodegroups,
    queues,
    teams,
    views,
    workload,
)

urlpatterns = [
    path("", views.overview, name="overview"),
    path("help/", help_page.help_page, name="help"),
    path(
        "clusters/<int:cluster_id>/workloads/<str:namespace>/<path:name>/",
        workload.workload_page,
        name="workload",
    ),
    path(
        "clusters/<int:cluster_id>/workload/",
        workload.workload_page_by_name,
        name="workload-by-name",
    ),
    path("clusters/<int:cluster_id>/topology/", views.topology_page, name="topology"),
    path(
        "clusters/<int:cluster_id>/node-groups/",
        nodegroups.node_groups_page,
        name="node-groups",
    ),
    path("clusters/<int:cluster_id>/queues/", queues.queues_page, name="queues"),
    path(
        "clusters/<int:cluster_id>/autoscaler-events/",
        autoscaler_events.autoscaler_events_page,
        name="autoscaler-events",
    ),
    path("clusters/<int:cluster_id>/teams/", teams.teams_page, name="teams"),
    path(
        "clusters/<int:cluster_id>/topology/data.json",
        views.topology_data,
        name="topology-data",
    ),
]
