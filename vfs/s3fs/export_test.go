package s3fs

// SetPartSize sets f's multipart part size, so tests exercise multipart
// uploads without writing 16 MiB parts.
func SetPartSize(f *FS, n int) { f.partSize = n }
