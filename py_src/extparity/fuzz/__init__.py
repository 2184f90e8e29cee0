"""Input generators for the differential fuzzer: generic mutators and subject plugins."""
