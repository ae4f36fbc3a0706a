"""The local stack: DynamoDB Local, tables from template.yaml, and a stand-in for API Gateway + EventBridge.

Nothing here is deployed; Lambda never imports it.
"""
