"""The dashboard pages' own API endpoints (pages that join apps): the node group
inventory, queue usage, autoscaler events and waiting per team (``node-groups/`` is taken by the
capacityweb.io NodeGroup objects, topology.api)."""

from django.urls import path

from capacityweb.api.urls import api_paths
from capacityweb.dashboard.autoscaler_events import AutoscalerEventList
from capacityweb.dashboard.nodegroups import NodeGroupList
from capacityweb.dashboard.queues import QueueList
from capacityweb.dashboard.teams import TeamWaitingList

api_paths.append(
    path("node-group-inventory/", NodeGroupList.as_view(), name="node-group-inventory")
)
api_paths.append(path("queue-usage/", QueueList.as_view(), name="queue-usage"))
api_paths.append(
    path("autoscaler-events/", AutoscalerEventList.as_view(), name="autoscaler-events")
)
api_paths.append(path("team-waiting/", TeamWaitingList.as_view(), name="team-waiting"))
