"""The network: vocabulary, number encoding, the model and where its weights come from."""
