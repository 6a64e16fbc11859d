"""The REST service (SPEC section 4): a FastAPI app over :class:`service.engine.Engine`."""
