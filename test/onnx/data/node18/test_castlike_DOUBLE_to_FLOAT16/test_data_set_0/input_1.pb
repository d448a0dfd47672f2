
BlikeJ1