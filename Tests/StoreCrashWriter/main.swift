// Replaced by the store's crash-test writer.
print("StoreCrashWriter")
