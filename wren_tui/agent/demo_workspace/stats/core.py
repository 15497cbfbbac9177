"""Summary statistics. By this package's convention an empty list summarizes to 0.0."""


def total(values):
    return float(sum(values))


def mean(values):
    """The arithmetic mean of the values."""
    return total(values) / len(values)


def median(values):
    """The middle value, or the mean of the two middle values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return float(ordered[middle])
    return (ordered[middle - 1] + ordered[middle]) / 2


def spread(values):
    """The distance between the largest and the smallest value."""
    if not values:
        return 0.0
    return float(max(values) - min(values))
