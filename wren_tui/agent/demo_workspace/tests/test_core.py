import unittest

from stats import mean, median, spread, total


class TotalTest(unittest.TestCase):
    def test_total_adds_the_values(self):
        self.assertEqual(total([1, 2, 3.5]), 6.5)


class MeanTest(unittest.TestCase):
    def test_mean_of_three_numbers(self):
        self.assertEqual(mean([1, 2, 6]), 3.0)

    def test_mean_of_empty_list_is_zero(self):
        self.assertEqual(mean([]), 0.0)


class MedianTest(unittest.TestCase):
    def test_median_of_odd_count_is_the_middle(self):
        self.assertEqual(median([5, 1, 3]), 3.0)

    def test_median_of_even_count_averages_the_middle_two(self):
        self.assertEqual(median([4, 1, 3, 2]), 2.5)


class SpreadTest(unittest.TestCase):
    def test_spread_of_empty_list_is_zero(self):
        self.assertEqual(spread([]), 0.0)


if __name__ == "__main__":
    unittest.main()
