// The libvips thumbnailer goes here.
