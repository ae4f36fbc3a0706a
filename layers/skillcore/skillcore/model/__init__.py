"""The model port: one small interface (`ChatModel`), an offline and a Bedrock implementation."""
