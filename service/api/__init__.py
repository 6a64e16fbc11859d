"""The REST service (docs/SPEC.md section 4): a FastAPI app over :class:`service.engine.Engine`."""
