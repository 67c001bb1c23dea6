// Shared helpers of the YpChat tests.
