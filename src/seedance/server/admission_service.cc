// Placeholder: filled in by issue 14 work.
