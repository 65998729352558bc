// The libcurl fetcher goes here.
