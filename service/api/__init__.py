"""The REST service (docs/SPEC.md section 4): a FastAPI app over the live service's parts
(:class:`service.live.engine.Engine`)."""
