"""Images, where a newcomer looks for them: what an upload must be and how it is measured without
decoding it whole (checks), fetching a remote library image within bounds (fetch), and making an image
one the platform takes in an article body (platform_format). Publishing's upload of a job's images is
services/publishing/image_uploads.py; the package's copies, services/export/package_images.py."""
