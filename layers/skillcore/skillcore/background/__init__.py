"""Background skills: the job lifecycle, the retry policy, the DynamoDB queue worker and the scan."""
