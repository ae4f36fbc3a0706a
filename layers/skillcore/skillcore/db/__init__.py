"""Store modules: the only code that talks to DynamoDB. One module per aggregate."""
