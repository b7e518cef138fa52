"""Click commands, one module per feature; quizsvc.cli wires them into `quizsvc`."""
