"""An import-linter contract type that tolerates pure modules not written yet.

The stock ``forbidden`` contract fails outright when a listed source module
does not exist, but the pure core grows module by module. This contract keeps
the listed modules that exist (and warns about the rest); the boundary test
tests/engine/test_boundary.py is what insists that every listed module exists.
"""

from typing import Any

from importlinter.contracts.forbidden import ForbiddenContract
from importlinter.domain.contract import ContractCheck


class PresentModulesForbiddenContract(ForbiddenContract):  # type: ignore[misc]
    """``forbidden``, applied to the source modules present in the import graph."""

    type_name = "forbidden_present"

    def check(self, graph: Any, verbose: bool) -> ContractCheck:
        expressions = set(self.source_modules)
        present = {
            expression
            for expression in expressions
            if expression.has_wildcard_expression() or expression.expression in graph.modules
        }
        self.source_modules = present
        result: ContractCheck = super().check(graph, verbose)
        missing = sorted(str(expression) for expression in expressions - present)
        result.warnings = [*result.warnings, *(f"{name} does not exist yet" for name in missing)]
        return result
