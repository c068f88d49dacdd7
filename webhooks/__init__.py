"""Admission for every topology dialect: pure rules (`webhooks.rules`) and the aiohttp
server that answers the API server with them (`webhooks.server`), its TLS, metrics, cluster
view (`webhooks.state`) and generated ValidatingWebhookConfiguration (`webhooks.configuration`).
"""
