"""The pure engine: scheduler simulation (placement), diagnosis, FGD; no Django, no I/O."""
